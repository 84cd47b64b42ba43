// A node that hangs, under a group's health_timeout: a handler that never
// returns, a run() that makes no sign of progress (each failed, or
// restarted by the group's restart policy), and a run() that works on with
// signs of life, which must not be taken for hung.
#include <algorithm>
#include <fstream>

#include "command.hpp"
#include "scenario_launch.hpp"
#include "processes/scenarios.hpp"
#include "services.hpp"

using test_process::eventually;
using test_process::scenario_options;
using test_process::scratch;

TEST_SUITE("health") {
  TEST_CASE(
      "a node that deadlocks itself: past its health_timeout it fails, or restarts") {
    {
      scratch dir;
      lp::program p("scenario_knot");
      scenarios::make(p, "knot", dir.path);
      auto running =
          lp::launch<lp::test_multi_processing>(p, scenario_options("knot", dir));
      auto knot = running.client(p.find<scenarios::Knot>("knots/0"));
      CHECK_THROWS_AS(knot.with_deadline(std::chrono::seconds(20)).tie(),
                      lp::transport_error);
      CHECK_THROWS_AS(running.wait(), lp::node_failure);
      auto summary = running.summary();
      INFO(summary);
      CHECK(summary.find("[lp] node knots/0 failed: hung: a call waited past its group's "
                         "health_timeout") != std::string::npos);
      CHECK(
          summary.find("past its group's health_timeout of 500 ms; ending its process") !=
          std::string::npos);
      // Its last words name the handler it was stuck in: tie, which calls
      // the node itself and waits for its own turn.
      auto hung = summary.find("[lp] node knots/0 hung: a call waited ");
      REQUIRE(hung != std::string::npos);
      auto words = summary.substr(hung, summary.find('\n', hung) - hung);
      INFO(words);
      CHECK(words.find(" ms for its handlers (calls in flight: ") != std::string::npos);
      CHECK(words.find("tie (1)") != std::string::npos);
    }
    {
      scratch dir;
      lp::program p("scenario_knot_restarted");
      scenarios::make(p, "knot_restarted", dir.path);
      auto running = lp::launch<lp::test_multi_processing>(
          p, scenario_options("knot_restarted", dir));
      auto knot = running.client(p.find<scenarios::Knot>("knots/0"));
      CHECK_THROWS_AS(knot.with_deadline(std::chrono::seconds(20)).tie(),
                      lp::transport_error);
      int answer = 0;
      CHECK(eventually(
          [&] {
            try {
              answer = knot.ping();
              return true;
            } catch (const lp::transport_error&) {
              return false;
            }
          },
          std::chrono::seconds(20)));
      CHECK(answer == 1);
      CHECK(running.stop());
    }
  }

  TEST_CASE("a run() that deadlocks itself: past its health_timeout it fails, named") {
    scratch dir;
    lp::program p("scenario_stuck");
    scenarios::make(p, "stuck", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, scenario_options("stuck", dir));
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.rfind(
              "[lp] node stuck/0 failed: hung: its run() made no sign of progress "
              "for its group's health_timeout",
              0) == 0);
    // The node's own last words say how long, and what counts as a sign.
    CHECK(summary.find(
              "[lp] node stuck/0 hung: its run() made no sign of progress (a call") !=
          std::string::npos);
    CHECK(summary.find("past its group's health_timeout of 500 ms; ending its process") !=
          std::string::npos);
    CHECK(dir.read("stuck.starts") == "1");
  }

  TEST_CASE("a run() that deadlocks itself is restarted by its group's restart policy") {
    scratch dir;
    lp::program p("scenario_stuck_restarted");
    scenarios::make(p, "stuck_restarted", dir.path);
    auto running = lp::launch<lp::test_multi_processing>(
        p, scenario_options("stuck_restarted", dir));
    // Restarted once, it deadlocks again, and that second hang is the failure.
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.find(
              "[lp] node stuck/0 failed: hung: its run() made no sign of progress") !=
          std::string::npos);
    CHECK(dir.read("stuck.starts") == "2");
  }

  TEST_CASE(
      "a run() that works past its health_timeout with lp::heartbeat() is not killed") {
    scratch dir;
    lp::program p("scenario_beating");
    scenarios::make(p, "beating", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, scenario_options("beating", dir));
    auto before = running.pids();
    std::sort(before.begin(), before.end());
    // Beating's run() takes 3 s, six health_timeouts; Patient's waits for
    // the stop all along.
    REQUIRE(
        eventually([&] { return dir.has("beating.done"); }, std::chrono::seconds(30)));
    auto after = running.pids();
    std::sort(after.begin(), after.end());
    INFO(running.summary());
    CHECK(running.summary().empty());
    CHECK(after == before);
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }
}
