// Per-group environment, GPUs and cores under local_mp, with fake device
// lists (--lp_gpus): every process its own devices, and a program asking for
// more than there are refused before anything starts.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/process/placement.hpp>

#include "command.hpp"
#include "processes/scenarios.hpp"
#include "services.hpp"

namespace placed {
using namespace std::chrono_literals;

using test_process::program_path;

using test_process::scratch;

// The words a node of `group` wrote about where it runs.
std::vector<std::string> where(const scratch& dir, const std::string& group) {
  std::ifstream in(dir.path + "/" + group + ".where");
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

lp::group_settings asking(int cpus, int gpus, bool pinned = true) {
  lp::group_settings settings;
  settings.resources.cpus = cpus;
  settings.resources.gpus = gpus;
  settings.pin_cores = pinned;
  return settings;
}
}  // namespace placed

using namespace std::chrono_literals;

TEST_SUITE("placement") {
  TEST_CASE(
      "place(): distinct GPUs for each process; cores in turn; too many GPUs refused") {
    using lp::detail::place;
    auto where = place({{"learner", placed::asking(2, 2)},
                        {"actors/0", placed::asking(1, 1)},
                        {"replay", placed::asking(1, 0, false)}},
                       {4, 5, 6, 7}, {0, 1, 2});
    CHECK(where[0].gpus == std::vector<int>{4, 5});
    CHECK(where[1].gpus == std::vector<int>{6});
    CHECK(where[2].gpus.empty());
    CHECK(where[0].cores == std::vector<int>{0, 1});
    CHECK(where[1].cores == std::vector<int>{2});
    CHECK(where[2].cores.empty());  // gave no resources: not pinned
    // More cores asked than the machine has: that process is not pinned.
    CHECK(place({{"big", placed::asking(8, 0)}}, {}, {0, 1})[0].cores.empty());
    CHECK_THROWS_WITH_AS(
        place({{"learner", placed::asking(1, 2)}, {"actors/0", placed::asking(1, 1)}},
              {0, 1}, {0}),
        "[lp.launch_error] the program asks for 3 GPU(s) (learner: 2, actors/0: 1) but "
        "this "
        "launch has 2 (0,1); give the devices with --lp_gpus=0,1,... or ask for fewer",
        lp::launch_error);
  }

  TEST_CASE("local_mp: each group's environment, GPUs and cores, as lp::context() says") {
    placed::scratch dir;
    test_process::command launcher({placed::program_path(), "--scenario=placed",
                                    "--dir=" + dir.path, "--lp_launch=local_mp",
                                    "--lp_gpus=4,5,6"});
    auto status = launcher.exit_code(60s);
    INFO(launcher.output());
    CHECK(status == 0);
    auto learner = placed::where(dir, "learner"), actors = placed::where(dir, "actors"),
         others = placed::where(dir, "others");
    REQUIRE(learner.size() == 5);
    REQUIRE(actors.size() == 5);
    REQUIRE(others.size() == 5);
    // Handed out in the order the nodes were added: actors/0 first.
    CHECK(learner[0] == "5,6");
    CHECK(learner[1] == "--xla_lp_test=1");
    CHECK(learner[3] == "5,6");
    CHECK(learner[4] == "1");  // pinned to its one core
    CHECK(learner[2] != "none");
    CHECK(actors[0] == "4");
    CHECK(actors[1] == "-");  // another group's environment is not its own
    CHECK(actors[3] == "4");
    CHECK(actors[4] == "1");
    CHECK(others[1] == "-");
    CHECK(others[2] == "none");  // no resources given: not pinned
    CHECK(others[3] == "none");
  }

  TEST_CASE("local_mp: more GPUs asked for than given: refused before any node starts") {
    placed::scratch dir;
    test_process::command launcher({placed::program_path(), "--scenario=placed",
                                    "--dir=" + dir.path, "--lp_launch=local_mp",
                                    "--lp_gpus=0,1"});
    auto status = launcher.exit_code(60s);
    auto output = launcher.output();
    INFO(output);
    CHECK(status == 1);
    CHECK(
        output.find("the program asks for 3 GPU(s) (actors/0: 1, learner/0: 2) but this "
                    "launch has 2 (0,1)") != std::string::npos);
    CHECK(output.find("serving at") == std::string::npos);
  }

  TEST_CASE("a group's environment: names the launch owns are refused") {
    lp::program p("env");
    CHECK_THROWS_AS(p.group("g").env({{"LP_NODES", "x"}}), lp::graph_error);
    CHECK_THROWS_AS(p.group("g").env({{"A=B", "x"}}), lp::graph_error);
    CHECK_NOTHROW(p.group("g").env({{"XLA_FLAGS", "--x"}}));
    CHECK(p.settings_of("g").env.at("XLA_FLAGS") == "--x");
  }
}
