#pragma once

// Which nodes' run() has returned, as a launcher hears of it from their
// processes: for lp::controller::wait({names}) and a node's
// lp::wait_for_runs, whose process asks the launcher, and to stop a
// program whose every run() has returned. The launcher of processes and
// the Kubernetes coordinator each keep one, under their own lock.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <launchpad/program.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lp::detail {

class finished_runs {
 public:
  explicit finished_runs(const program& graph) : graph_(graph) {
    for (const auto& spec : graph.nodes())
      if (spec.has_run) runnable_.insert(spec.label);
  }

  // Notes that `label`'s run() returned; true once every run() has (and
  // the program has at least one). Under the keeper's lock.
  bool finish(const std::string& label) {
    finished_.insert(label);
    return !runnable_.empty() && finished_ == runnable_;
  }

  // Waits, on `changed` under `lock`, until the run() of every node named
  // (a label or a group's name) has returned, or `stopping()`: true in the
  // first case; nullopt if neither came within `wait`.
  template <class Stopping>
  std::optional<bool> wait(std::unique_lock<std::mutex>& lock,
                           std::condition_variable& changed,
                           const std::vector<std::string>& names,
                           std::chrono::milliseconds wait, Stopping stopping) const {
    auto wanted = runnable_labels(graph_, names);
    auto done = [&] {
      return std::includes(finished_.begin(), finished_.end(), wanted.begin(),
                           wanted.end());
    };
    if (!changed.wait_for(lock, wait, [&] { return stopping() || done(); }))
      return std::nullopt;
    return done();
  }

 private:
  const program& graph_;
  std::set<std::string> runnable_, finished_;
};

}  // namespace lp::detail
