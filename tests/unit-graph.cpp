// The program graph: labels, groups, handles, and what a launch builds.
#include "services.hpp"

namespace g {
struct Worker {
  std::vector<lp::client<t::Counter>> counters;
  lp::client<t::Counter> main;
  long sum() {
    long total = main.get();
    for (auto& counter : counters) total += counter.add(1);
    return total;
  }
};
struct Ctor {
  Ctor(lp::client<t::Counter> c, std::string name) : counter(std::move(c)), label(std::move(name)) {}
  std::string hello() const { return label + ":" + std::to_string(counter.get()); }
  lp::client<t::Counter> counter;
  std::string label;
};
}  // namespace g
LP_SERVICE(g::Worker, sum);
LP_SERVICE(g::Ctor, hello);

TEST_SUITE("graph") {
  TEST_CASE("labels are checked") {
    lp::program p("labels");
    p.add_node<t::Counter>("a");
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>("a"), doctest::Contains("already has a node"),
                         lp::graph_error);
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>(""), doctest::Contains("must not be empty"),
                         lp::graph_error);
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>("a/b"), doctest::Contains("may hold only"),
                         lp::graph_error);
    CHECK_THROWS_AS(p.add_node<t::Counter>("sp ace"), lp::graph_error);
    CHECK_THROWS_AS(p.group(""), lp::graph_error);
    CHECK_THROWS_WITH_AS(p.group("a"), doctest::Contains("a group cannot take its name"),
                         lp::graph_error);
    p.group("actors");
    CHECK_THROWS_AS(p.add_node<t::Counter>("actors"), lp::graph_error);
    CHECK_THROWS_AS(lp::program(""), lp::graph_error);
    CHECK_THROWS_AS(lp::program("my program"), lp::graph_error);
  }

  TEST_CASE("groups number their nodes, and handles record edges") {
    lp::program p("groups");
    auto c = p.add_node<t::Counter>("counter");
    auto actors = p.group("actors");
    auto a0 = actors.add_node<t::Counter>();
    auto a1 = p.group("actors").add_node<t::Counter>();  // the same group again
    CHECK(a0.label() == "actors/0");
    CHECK(a1.label() == "actors/1");
    p.add_node<g::Worker>("worker", std::vector{a0, a1}, c);
    REQUIRE(p.nodes().size() == 4);
    CHECK(p.node("actors/1").group == "actors");
    CHECK(p.node("actors/1").index == 1);
    CHECK(p.node("counter").index == -1);
    CHECK(p.node("worker").edges == std::vector<std::string>{"actors/0", "actors/1", "counter"});
    CHECK(p.node("worker").service == "g::Worker");
    CHECK_FALSE(p.node("worker").has_run);
    CHECK_THROWS_AS(p.node("nobody"), lp::graph_error);
  }

  TEST_CASE("building the same graph twice gives the same graph") {
    auto build = [](lp::program& p) {
      auto c = p.add_node<t::Counter>("counter");
      for (int i = 0; i < 3; ++i) p.group("g").add_node<g::Ctor>(c, "n" + std::to_string(i));
    };
    lp::program one("same"), two("same");
    build(one);
    build(two);
    REQUIRE(one.nodes().size() == two.nodes().size());
    for (std::size_t i = 0; i < one.nodes().size(); ++i) {
      CHECK(one.nodes()[i].label == two.nodes()[i].label);
      CHECK(one.nodes()[i].edges == two.nodes()[i].edges);
    }
  }

  TEST_CASE("a handle from another program is refused") {
    lp::program a("a"), b("b");
    auto c = a.add_node<t::Counter>("counter");
    CHECK_THROWS_WITH_AS(b.add_node<g::Ctor>("x", c, "name"),
                         doctest::Contains("from another program"), lp::graph_error);
    auto running = lp::launch<lp::test_multi_threading>(b);
    CHECK_THROWS_AS(running.client(c), lp::graph_error);
  }

  TEST_CASE("handles become clients, also inside vectors and through constructors") {
    lp::program p("resolve");
    auto c = p.add_node<t::Counter>("counter");
    auto a0 = p.group("actors").add_node<t::Counter>();
    auto a1 = p.group("actors").add_node<t::Counter>();
    auto w = p.add_node<g::Worker>("worker", std::vector{a0, a1}, c);
    auto k = p.add_node<g::Ctor>("ctor", c, "named");
    auto running = lp::launch<lp::test_multi_threading>(p);
    running.client(c).add(10);
    CHECK(running.client(w).sum() == 12);
    CHECK(running.client(w).sum() == 14);
    CHECK(running.client(k).hello() == "named:10");
    CHECK(running.urls().size() == 5);
    CHECK(running.urls().at("actors/1").rfind("http://127.0.0.1:", 0) == 0);
  }
}
