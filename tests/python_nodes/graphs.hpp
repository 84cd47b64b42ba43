#pragma once

// The graphs of the Python nodes' tests, built the same way by the test
// (the launcher) and by its node processes (program.cpp).

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "services.hpp"

namespace pyn {

struct graph {
  lp::handle<Counter> counter;
  lp::handle<Learner> learner;
  lp::handle<Tally> tally;
  lp::handle<Beater> beater;
  lp::handle<Waiter> waiter;
};

// "calls": a Counter and a Learner that calls it. "restarts": a Tally that
// keeps checkpoints and restarts after a failure (also from a damaged
// checkpoint, which no restart mends). "mismatch": a Learner-like service
// whose class lacks a method, in a group that would restart it.
// "init_raises": one whose __init__ raises, restarted once. Under a
// health_timeout of 500 ms: "stuck", a run() that makes no sign of progress;
// "beating", one that works 2 s with heartbeats; "knot", a Learner whose
// handler sleeps as long as it is asked. "stop_by_signal", "stop_by_python",
// "stop_by_peer": a Waiter, whose run() and handler watch for the stop,
// and a Prober that calls that handler; the stop comes from outside, from
// the Waiter's own launchpad_client.stop(), or from a C++ Stopper's
// lp::stop(). Their notes go to the directory $LP_PYN_NOTES.
// "ignores_stop": a Beater whose run() sleeps through the stop.
inline graph make(lp::program& p, const std::string& scenario) {
  graph made;
  if (scenario.starts_with("stop_by_")) {
    const char* notes = std::getenv("LP_PYN_NOTES");
    std::string dir = notes ? notes : "/nonexistent";
    made.waiter =
        p.add_node<Waiter>("waiter", dir, scenario == "stop_by_python" ? 0.3 : -1.0);
    p.add_node<Prober>("prober", made.waiter);
    if (scenario == "stop_by_peer") p.add_node<Stopper>("stopper", dir, 0.3);
  } else if (scenario == "ignores_stop") {
    made.beater = p.add_node<Beater>("beater", 600.0, false);  // its run() sleeps on
  } else if (scenario == "calls") {
    made.counter = p.add_node<Counter>("counter");
    made.learner = p.add_node<Learner>("learner", made.counter, 0.5, std::string("alpha"),
                                       std::vector<float>{2.5f, 1.f});
  } else if (scenario == "restarts") {
    auto tallies = p.group("tallies");
    tallies.restart_on_failure(2, std::chrono::milliseconds(100))
        .checkpoint_every(std::chrono::milliseconds(200));
    made.tally = tallies.add_node<Tally>();
  } else if (scenario == "mismatch") {
    p.group("learners").restart_on_failure(3).add_node<MissingMethod>();
    made.counter = p.add_node<Counter>("counter");
  } else if (scenario == "stuck" || scenario == "beating") {
    made.beater =
        p.group(scenario)
            .health_timeout(std::chrono::milliseconds(500))
            .add_node<Beater>(scenario == "stuck" ? 600.0 : 2.0, scenario == "beating");
  } else if (scenario == "knot") {
    made.counter = p.add_node<Counter>("counter");
    made.learner = p.group("knots")
                       .health_timeout(std::chrono::milliseconds(500))
                       .add_node<Learner>(made.counter, 0.5, std::string("knot"),
                                          std::vector<float>{1.f});
  } else if (scenario == "init_raises") {
    p.group("learners")
        .restart_on_failure(1, std::chrono::milliseconds(50))
        .add_node<InitRaises>();
    made.counter = p.add_node<Counter>("counter");
  }
  return made;
}

}  // namespace pyn
