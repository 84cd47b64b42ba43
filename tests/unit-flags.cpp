// --lp_* flags: which are ours, which are the user's.
#include "services.hpp"

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
