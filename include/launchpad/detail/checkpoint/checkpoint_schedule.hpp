#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <launchpad/detail/util/periodic_worker.hpp>
#include <utility>
#include <vector>

namespace lp::detail {

// Saves each node that has a checkpoint interval whenever its interval has
// passed since its last save, on a thread of its own, until stopped.
class checkpoint_schedule {
 public:
  using clock = periodic_worker::clock;

  struct saved_node {
    std::chrono::milliseconds interval;
    std::function<void()> save;  // a failed save is the saver's to report
  };

  // Starts the thread if any node has an interval; the first save of each
  // comes one interval from now.
  void start(std::vector<saved_node> nodes) {
    if (nodes.empty()) return;
    auto now = clock::now();
    for (auto& node : nodes) {
      auto due = now + node.interval;
      nodes_.push_back({std::move(node), due});
    }
    worker_.start([this] {
      auto next = clock::time_point::max();
      for (auto& [node, due] : nodes_) {
        if (due <= clock::now()) {
          node.save();
          due = clock::now() + node.interval;
        }
        next = std::min(next, due);
      }
      return next;
    });
  }

  // Waits for a save under way, and starts no other.
  void stop() { worker_.stop(); }

 private:
  struct scheduled {
    saved_node node;
    clock::time_point due;
  };

  std::vector<scheduled> nodes_;  // the worker's alone once it runs
  periodic_worker worker_;
};

}  // namespace lp::detail
