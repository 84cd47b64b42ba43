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
};

// "calls": a Counter and a Learner that calls it. "restarts": a Tally that
// keeps checkpoints and restarts after a failure. "mismatch": a Learner-like
// service whose class lacks a method, in a group that would restart it.
inline graph make(lp::program& p, const std::string& scenario) {
  graph made;
  if (scenario == "calls") {
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
  } else if (scenario == "missing_on_the_host") {
    // The launcher finds nodes.py, the node's process does not (its
    // PYTHONPATH holds only the package): a host unlike the launcher's.
    const char* package = std::getenv("LP_TEST_PACKAGE_DIR");
    p.group("learners")
        .restart_on_failure(3)
        .env({{"PYTHONPATH", package ? package : ""}})
        .add_node<Tally>();
    made.counter = p.add_node<Counter>("counter");
  }
  return made;
}

}  // namespace pyn
