#pragma once
// The ways a program ends: a node calls lp::stop(), every run() returns,
// main calls lp::stop(), or Ctrl+C. `make_program` builds the graph for one.
#include <atomic>
#include <chrono>
#include <iostream>
#include <launchpad/launchpad.hpp>
#include <string>
#include <thread>

namespace program_wait {

// Counts its steps; any node or main() may ask how far it got.
struct Worker {
  int steps;
  std::atomic<int> done = 0;  // run() counts while callers read
  void run() {
    for (; done < steps && !lp::stop_requested(); ++done)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::cout << lp::context().label + " did " + std::to_string(done) + " steps\n"
              << std::flush;
  }
  int progress() const { return done; }
};
LP_SERVICE(Worker, progress);

// Waits until every worker is halfway, then stops the whole program.
struct Stopper {
  std::vector<lp::client<Worker>> workers;
  int halfway;
  void run() {
    for (auto& worker : workers)
      while (worker.progress() < halfway && !lp::stop_requested())
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::cout << "every worker is halfway: stopping the program" << std::endl;
    lp::stop();
  }
};
LP_SERVICE(Stopper);

// Serves until someone stops the program (main, or Ctrl+C).
struct Clock {
  Clock() {
    lp::on_stop([] { std::cout << "the clock was asked to stop" << std::endl; });
  }
  long now() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};
LP_SERVICE(Clock, now);

// `end` is how the program ends: "node" (a node calls lp::stop()), "workers"
// (every run() returns), or "outside" (only a Clock that serves until main
// or Ctrl+C stops it).
inline void make_program(lp::program& p, const std::string& end, int steps) {
  if (end == "outside") {
    p.add_node<Clock>("clock");
    return;
  }
  std::vector<lp::handle<Worker>> workers;
  auto group = p.group("workers");
  // With a Stopper the workers have more to do than it lets them finish.
  for (int i = 0; i < 3; ++i)
    workers.push_back(group.add_node<Worker>(end == "node" ? steps * 100 : steps));
  if (end == "node") p.add_node<Stopper>("stopper", workers, steps / 2);
}

}  // namespace program_wait
