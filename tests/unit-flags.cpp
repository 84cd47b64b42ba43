// --lp_* flags: which are ours, which are the user's.
#include <launchpad/detail/graph/graph_picture.hpp>
#include <launchpad/detail/run/flags.hpp>

#include "services.hpp"

namespace life_like {
struct User {
  lp::client<t::Counter> counter;
  int use() { return static_cast<int>(counter.get()); }
};
LP_SERVICE(User, use);
}  // namespace life_like

namespace {
struct args {
  explicit args(std::vector<std::string> words) : storage(std::move(words)) {
    for (auto& word : storage) pointers.push_back(word.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(storage.size()); }
  char** argv() { return pointers.data(); }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
};
}  // namespace

TEST_SUITE("flags") {
  TEST_CASE("--lp_launch in both spellings; the user's own flags are left alone") {
    args a({"prog", "--lp_launch=test_mt", "--my_flag=3", "input.txt"});
    CHECK(lp::detail::parse_flags(a.argc(), a.argv()).launch == "test_mt");
    args b({"prog", "--lp_launch", "local_mt", "-v"});
    CHECK(lp::detail::parse_flags(b.argc(), b.argv()).launch == "local_mt");
    args c({"prog", "--", "--lp_bogus"});  // after "--" nothing is ours
    CHECK_FALSE(lp::detail::parse_flags(c.argc(), c.argv()).launch.has_value());
  }

  TEST_CASE("unknown --lp_ flags and missing values are usage errors") {
    args a({"prog", "--lp_lunch=local_mt"});
    CHECK_THROWS_WITH_AS(lp::detail::parse_flags(a.argc(), a.argv()),
                         doctest::Contains("unknown flag --lp_lunch"), lp::usage_error);
    args b({"prog", "--lp_launch"});
    CHECK_THROWS_WITH_AS(lp::detail::parse_flags(b.argc(), b.argv()),
                         doctest::Contains("needs a value"), lp::usage_error);
  }

  TEST_CASE("--lp_graph draws the graph: groups, nodes with their service, edges from handles") {
    lp::program q("edges");
    auto target = q.add_node<t::Counter>("counter");
    q.group("users").add_node<life_like::User>(target);
    auto dot = lp::detail::graph_picture(q, "dot");
    CHECK(dot.find("digraph \"edges\"") != std::string::npos);
    CHECK(dot.find("subgraph \"cluster_users\"") != std::string::npos);
    CHECK(dot.find("\"users/0\" -> \"counter\" [label=\"t::Counter\"]") != std::string::npos);
    CHECK(dot.find("\"counter\" [label=\"counter\\nt::Counter\"]") != std::string::npos);
    auto mermaid = lp::detail::graph_picture(q, "mermaid");
    CHECK(mermaid.rfind("flowchart LR\n", 0) == 0);
    CHECK(mermaid.find("subgraph users") != std::string::npos);
    CHECK(mermaid.find("n1 -- t::Counter --> n0") != std::string::npos);
    args graph({"prog", "--lp_graph=mermaid"});
    CHECK(lp::launch(q, graph.argc(), graph.argv()) == 0);  // printed, nothing launched
    args bad({"prog", "--lp_graph=png"});
    CHECK(lp::launch(q, bad.argc(), bad.argv()) == 2);
  }

  TEST_CASE("lp::launch: --lp_help exits 0, a bad flag or policy exits 2, nothing runs") {
    lp::program p("flags");
    p.add_node<t::Counter>("counter");  // would serve forever if launched
    args help({"prog", "--lp_help"});
    CHECK(lp::launch(p, help.argc(), help.argv()) == 0);
    args bad({"prog", "--lp_nope"});
    CHECK(lp::launch(p, bad.argc(), bad.argv()) == 2);
    args policy({"prog", "--lp_launch=cloud"});
    CHECK(lp::launch(p, policy.argc(), policy.argv()) == 2);
  }
}
