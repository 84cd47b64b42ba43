// Nodes that hold clients of each other (program::reserve and define), and
// a node that waits for a group's runs (lp::wait_for_runs), under threads
// and processes.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/cli/graph_picture.hpp>

#include "command.hpp"
#include "processes/scenarios.hpp"
#include "services.hpp"

namespace cycles {
using test_process::program_path;

using test_process::scratch;

struct Self {
  void run() { lp::wait_for_runs("selves"); }
};
}  // namespace cycles
LP_SERVICE(cycles::Self);

TEST_SUITE("cycles") {
  TEST_CASE(
      "reserve and define: two nodes hold handles to each other; the picture shows "
      "both") {
    lp::program p("pair");
    auto first = p.reserve<scenarios::Peer>("first");
    auto second = p.add_node<scenarios::Peer>("second", first, 1);
    p.define(first, second, 1);
    CHECK(p.node("first").edges == std::vector<std::string>{"second"});
    CHECK(p.node("second").edges == std::vector<std::string>{"first"});
    auto dot = lp::detail::graph_picture(p, "dot");
    CHECK(dot.find("\"first\" -> \"second\"") != std::string::npos);
    CHECK(dot.find("\"second\" -> \"first\"") != std::string::npos);
    CHECK_THROWS_WITH_AS(p.define(first, second, 1), doctest::Contains("defined already"),
                         lp::graph_error);
    CHECK_THROWS_WITH_AS(p.define(second, first, 1), doctest::Contains("defined already"),
                         lp::graph_error);
    lp::program other("other");
    CHECK_THROWS_AS(other.define(first, second, 1), lp::graph_error);
    CHECK_THROWS_AS(p.reserve<scenarios::Peer>("second"), lp::graph_error);
  }

  TEST_CASE(
      "a node reserved and never defined: the launch refuses the program, naming it") {
    lp::program p("half");
    auto evaluator = p.group("evaluators").reserve<scenarios::Peer>();
    p.add_node<scenarios::Peer>("learner", evaluator, 1);
    CHECK_THROWS_WITH_AS(
        lp::launch<lp::test_multi_threading>(p),
        doctest::Contains("node 'evaluators/0' of program 'half' was reserved "
                          "and never defined"),
        lp::graph_error);
    std::string flag = "--lp_launch=local_mp";
    char name[] = "half";
    char* argv[] = {name, flag.data(), nullptr};
    CHECK(lp::launch(p, 2, argv) == 1);
  }

  TEST_CASE("test_mt: peers call each other; the coordinator waits for their runs") {
    cycles::scratch dir;
    lp::program p("scenario_mutual");
    scenarios::make(p, "mutual", dir.path);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait({"coordinator"}));
    CHECK(dir.read("runs.done") == "50,50");
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }

  TEST_CASE("local_mp and local_mt: the same program ends by itself, exit 0") {
    for (std::string policy : {"local_mp", "local_mt"}) {
      CAPTURE(policy);
      cycles::scratch dir;
      test_process::command launcher({cycles::program_path(), "--scenario=mutual",
                                      "--dir=" + dir.path, "--lp_launch=" + policy});
      auto status = launcher.exit_code(std::chrono::seconds(120));
      INFO(launcher.output());
      CHECK(status == 0);
      CHECK(dir.read("runs.done") == "50,50");
    }
  }

  TEST_CASE("lp::wait_for_runs: not for the waiting node itself, nor outside a program") {
    CHECK_THROWS_AS(lp::wait_for_runs("actors"), lp::usage_error);
    lp::program p("self");
    p.group("selves").add_node<cycles::Self>();
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    CHECK(running.summary().find("would wait for its own run()") != std::string::npos);
  }
}
