#pragma once
// Many actors ask one inference node for actions. The node's act() is
// batched: it is invoked once for up to 16 waiting observations, as a policy
// network on an accelerator would want, while each actor still calls it with
// its own observation and gets its own action back.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <launchpad/launchpad.hpp>
#include <mutex>
#include <vector>

namespace batching {

// The "network": a fixed linear layer from 4 inputs to 3 action scores.
inline int best_action(const lp::tensor<float>& observation) {
  static constexpr float weights[3][4] = {{1, 0, 0, -1}, {0, 1, -1, 0}, {-1, 0, 1, 1}};
  int best = 0;
  float best_score = -1e30f;
  for (int action = 0; action < 3; ++action) {
    float score = 0;
    for (int i = 0; i < 4; ++i)
      score += weights[action][i] * observation[static_cast<std::size_t>(i)];
    if (score > best_score) best = action, best_score = score;
  }
  return best;
}

inline lp::tensor<float> observation_of(int actor, int step) {
  lp::tensor<float> observation({4});
  for (int i = 0; i < 4; ++i)
    observation[static_cast<std::size_t>(i)] =
        static_cast<float>((actor * 7 + step * 3 + i * 5) % 11) - 5;
  return observation;
}

struct Inference {
  // One observation per waiting caller in, one action per caller out.
  std::vector<int> act(std::vector<lp::tensor<float>> observations) {
    ++invocations;
    std::vector<int> actions;
    for (const auto& observation : observations)
      actions.push_back(best_action(observation));
    return actions;
  }
  // How many times act() ran, for the report.
  long batches() const { return invocations; }
  long invocations = 0;
};
LP_SERVICE(Inference, act, batches);
LP_BATCHED(Inference, act, 16, std::chrono::milliseconds(2));

struct Summary {
  long calls = 0;
  long wrong = 0;  // actions that differ from the network's own answer
  long batches = 0;
};

// Collects what every actor saw, then reports and stops the program.
struct Reporter {
  lp::client<Inference> policy;
  long actors;
  std::function<void(const Summary&)> report;

  void done(long calls, long wrong) {
    std::lock_guard lock(mutex);
    tally.calls += calls;
    tally.wrong += wrong;
    ++finished;
    changed.notify_all();
  }

  void run() {
    std::unique_lock lock(mutex);
    // run() and done() run on different threads; wake up now and then to
    // notice a program stopped from outside.
    while (finished < actors && !lp::stop_requested())
      changed.wait_for(lock, std::chrono::milliseconds(50));
    tally.batches = policy.batches();
    report(tally);
    lp::stop();
  }

  // Not given by add_node: the aggregate's remaining members start empty.
  std::mutex mutex{};
  std::condition_variable changed{};
  Summary tally{};
  long finished = 0;
};
LP_SERVICE(Reporter, done);

struct Actor {
  lp::client<Inference> policy;
  lp::client<Reporter> reporter;
  int id;
  int steps;

  void run() {
    long wrong = 0;
    for (int step = 0; step < steps; ++step) {
      auto observation = observation_of(id, step);
      wrong += policy.act(observation) != best_action(observation);
    }
    reporter.done(steps, wrong);
  }
};
LP_SERVICE(Actor);

inline void make_program(lp::program& p, int num_actors, int steps,
                         std::function<void(const Summary&)> report) {
  auto policy = p.add_node<Inference>("inference");
  auto reporter = p.add_node<Reporter>("reporter", policy, static_cast<long>(num_actors),
                                       std::move(report));
  auto actors = p.group("actors");
  for (int i = 0; i < num_actors; ++i) actors.add_node<Actor>(policy, reporter, i, steps);
}
}  // namespace batching
