#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/detail/observe/node_metrics.hpp>
#include <launchpad/detail/util/periodic_worker.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

// A node of a group with a health_timeout, as the watchdog sees it.
struct watched_node {
  std::string label;
  std::chrono::milliseconds timeout;
  std::function<void()> probe;  // returns once none of the node's handlers runs
  const node_metrics& metrics;  // which of its methods have calls in flight
  run_progress& progress;       // of its run()
};

// Ends this process when a watched node hangs (docs/launching.md, "Hung
// nodes"). A prober per node waits for the node's handlers in turn; the
// watchdog ends the process when one has waited past the node's timeout, or
// when the node's run() has made no sign of progress that long (until the
// program stops: then the termination notice bounds it).
//
// It ends it with std::_Exit, at once: no destructor, no atexit handler, no
// flush of what is not written yet. A hung handler or run() cannot be
// stopped, nor its thread joined, so the ordinary end (stop the program,
// join its threads, destroy its nodes) would wait for it for ever, and
// exit() would destroy statics under threads still running. Only a node
// process that a launcher started watches (host_options::watch_health):
// it hosts nothing but the program's nodes, and its launcher reads the exit
// status, says which part hung, and restarts the node or stops the program.
// No launcher, test or local_mt process is ever ended this way.
class watchdog {
 public:
  using clock = periodic_worker::clock;

  // Starts a prober per node and the watchdog; nothing if `nodes` is empty.
  void start(const launch_state& program, std::vector<watched_node> nodes) {
    if (nodes.empty()) return;
    auto shortest = std::chrono::milliseconds::max();
    for (auto& node : nodes) {
      shortest = std::min(shortest, node.timeout);
      probed_.push_back(std::make_unique<probed>(std::move(node)));
    }
    for (auto& watched : probed_)
      watched->prober.start([node = watched.get()] {
        node->probing_since =
            std::max<clock::rep>(clock::now().time_since_epoch().count(), 1);
        node->node.probe();
        node->probing_since = 0;
        return clock::now() + node->node.timeout / 4;
      });
    watcher_.start([this, &program, shortest] {
      for (auto& watched : probed_) check(*watched, program);
      return clock::now() + shortest / 4;
    });
  }

  // Asks every thread to stop, then waits for each: a prober waits for the
  // probe under way.
  void stop() {
    watcher_.request_stop();
    for (auto& watched : probed_) watched->prober.request_stop();
    watcher_.stop();
    for (auto& watched : probed_) watched->prober.stop();
  }

 private:
  struct probed {
    explicit probed(watched_node watched) : node(std::move(watched)) {}
    watched_node node;
    // When the running probe began waiting for the node's handlers, in
    // clock ticks; 0 when none waits.
    std::atomic<clock::rep> probing_since{0};
    periodic_worker prober;
  };

  static long long ms(clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }

  static void check(probed& watched, const launch_state& program) {
    const auto& node = watched.node;
    auto since = watched.probing_since.load();
    auto waited = since == 0 ? clock::duration::zero()
                             : clock::now() - clock::time_point(clock::duration(since));
    if (waited >= node.timeout) {
      auto busy = methods_in_flight(node.metrics);
      std::cerr << "[lp] node " << node.label << " hung: a call waited " << ms(waited)
                << " ms for its handlers ("
                << (busy.empty() ? "no call in flight" : "calls in flight: " + busy)
                << "), past its group's health_timeout of " << node.timeout.count()
                << " ms; ending its process" << std::endl;
      std::_Exit(hung_exit_status);  // why not exit(): the class's comment
    }
    auto silence = node.progress.silence(clock::now());
    if (silence >= node.timeout && !program.stop_requested()) {
      std::cerr << "[lp] node " << node.label << " hung: its run() made no "
                << "sign of progress (a call, lp::stop_requested(), a metric, "
                   "lp::heartbeat()) for "
                << ms(silence) << " ms, past its group's health_timeout of "
                << node.timeout.count() << " ms; ending its process" << std::endl;
      std::_Exit(hung_run_exit_status);
    }
  }

  std::vector<std::unique_ptr<probed>> probed_;
  periodic_worker watcher_;
};

}  // namespace lp::detail
