// The program graph: labels, groups, handles, and what a launch builds.
#include "command.hpp"
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
  Ctor(lp::client<t::Counter> c, std::string name)
      : counter(std::move(c)), label(std::move(name)) {}
  std::string hello() const { return label + ":" + std::to_string(counter.get()); }
  lp::client<t::Counter> counter;
  std::string label;
};
}  // namespace g
LP_SERVICE(g::Worker, sum);
LP_SERVICE(g::Ctor, hello);

// LP_SERVICE lists up to 64 methods (its expansion is bounded:
// detail/reflect/preprocessor.hpp).
namespace g {
struct Wide {
  int m1() const { return 1; }
  int m2() const { return 2; }
  int m3() const { return 3; }
  int m4() const { return 4; }
  int m5() const { return 5; }
  int m6() const { return 6; }
  int m7() const { return 7; }
  int m8() const { return 8; }
  int m9() const { return 9; }
  int m10() const { return 10; }
  int m11() const { return 11; }
  int m12() const { return 12; }
  int m13() const { return 13; }
  int m14() const { return 14; }
  int m15() const { return 15; }
  int m16() const { return 16; }
  int m17() const { return 17; }
  int m18() const { return 18; }
  int m19() const { return 19; }
  int m20() const { return 20; }
  int m21() const { return 21; }
  int m22() const { return 22; }
  int m23() const { return 23; }
  int m24() const { return 24; }
  int m25() const { return 25; }
  int m26() const { return 26; }
  int m27() const { return 27; }
  int m28() const { return 28; }
  int m29() const { return 29; }
  int m30() const { return 30; }
  int m31() const { return 31; }
  int m32() const { return 32; }
  int m33() const { return 33; }
  int m34() const { return 34; }
  int m35() const { return 35; }
  int m36() const { return 36; }
  int m37() const { return 37; }
  int m38() const { return 38; }
  int m39() const { return 39; }
  int m40() const { return 40; }
  int m41() const { return 41; }
  int m42() const { return 42; }
  int m43() const { return 43; }
  int m44() const { return 44; }
  int m45() const { return 45; }
  int m46() const { return 46; }
  int m47() const { return 47; }
  int m48() const { return 48; }
  int m49() const { return 49; }
  int m50() const { return 50; }
  int m51() const { return 51; }
  int m52() const { return 52; }
  int m53() const { return 53; }
  int m54() const { return 54; }
  int m55() const { return 55; }
  int m56() const { return 56; }
  int m57() const { return 57; }
  int m58() const { return 58; }
  int m59() const { return 59; }
  int m60() const { return 60; }
  int m61() const { return 61; }
  int m62() const { return 62; }
  int m63() const { return 63; }
  int m64() const { return 64; }
};
}  // namespace g
LP_SERVICE(g::Wide, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16,
           m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32,
           m33, m34, m35, m36, m37, m38, m39, m40, m41, m42, m43, m44, m45, m46, m47, m48,
           m49, m50, m51, m52, m53, m54, m55, m56, m57, m58, m59, m60, m61, m62, m63,
           m64);
static_assert(decltype(boost::hana::length(
                  lp::detail::definition_of<g::Wide>::methods))::value == 64);

TEST_SUITE("graph") {
  TEST_CASE("labels are checked") {
    lp::program p("labels");
    p.add_node<t::Counter>("a");
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>("a"),
                         doctest::Contains("already has a node"), lp::graph_error);
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>(""),
                         doctest::Contains("must not be empty"), lp::graph_error);
    CHECK_THROWS_WITH_AS(p.add_node<t::Counter>("a/b"),
                         doctest::Contains("may hold only"), lp::graph_error);
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
    CHECK(p.node("worker").edges ==
          std::vector<std::string>{"actors/0", "actors/1", "counter"});
    CHECK(p.node("worker").service == "g::Worker");
    CHECK_FALSE(p.node("worker").has_run);
    CHECK_THROWS_AS(p.node("nobody"), lp::graph_error);
  }

  TEST_CASE("building the same graph twice gives the same graph") {
    auto build = [](lp::program& p) {
      auto c = p.add_node<t::Counter>("counter");
      for (int i = 0; i < 3; ++i)
        p.group("g").add_node<g::Ctor>(c, "n" + std::to_string(i));
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

  TEST_CASE(
      "a mistake in building the graph ends the program cleanly: its message, exit 1") {
    // main() lets each escape, before lp::launch or inside it.
    for (const auto& mistake_and_message : std::map<std::string, std::string>{
             {"env",
              "group 'extra': 'LP_SECRET' cannot be an environment variable's name"},
             {"label", "a node label 'no spaces' may hold only letters"},
             {"reserved",
              "node 'later' of program 'scenario_counter' was reserved and never "
              "defined"}}) {
      const std::string& mistake = mistake_and_message.first;
      const std::string& message = mistake_and_message.second;
      INFO(mistake);
      test_process::command launcher({test_process::program_path(), "--scenario=counter",
                                      "--graph_mistake=" + mistake,
                                      "--lp_launch=local_mp"});
      auto status = launcher.exit_code(std::chrono::seconds(60));
      auto output = launcher.output();
      INFO(output);
      CHECK(status == 1);
      CHECK(output.find("[lp] the program could not start: [lp.graph_error] " +
                        message) != std::string::npos);
      CHECK(output.find("terminate called") == std::string::npos);
    }
  }

  TEST_CASE(
      "text arguments: a string literal, a char array and a char pointer are kept as "
      "std::string") {
    lp::program p("text");
    auto counter = p.add_node<t::Counter>("counter");
    char buffer[] = "a buffer";
    const char* pointer = "a pointer";
    auto literal = p.add_node<g::Ctor>("literal", counter, "a literal");
    auto from_buffer = p.add_node<g::Ctor>("buffer", counter, buffer);
    auto from_pointer = p.add_node<g::Ctor>("pointer", counter, pointer);
    buffer[0] = 'X';  // the program holds a copy of the text
    const char* null = nullptr;
    CHECK_THROWS_WITH_AS(p.add_node<g::Ctor>("null", counter, null),
                         doctest::Contains("a null char pointer is no text"),
                         lp::graph_error);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.client(literal).hello() == "a literal:0");
    CHECK(running.client(from_buffer).hello() == "a buffer:0");
    CHECK(running.client(from_pointer).hello() == "a pointer:0");
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
