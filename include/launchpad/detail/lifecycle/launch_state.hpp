#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <launchpad/detail/protocol/constants.hpp>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// The exit statuses of a node process that ended itself for a hung node
// (its group's health_timeout), for its launcher to say which part hung: a
// handler, or run(). A Python node's process ends with the same.
inline constexpr int hung_exit_status = protocol::exit_status::hung;
inline constexpr int hung_run_exit_status = protocol::exit_status::hung_run;
// A node process that could not start for a reason a restart cannot mend
// (a Python node whose class differs from its declaration).
inline constexpr int unrecoverable_exit_status = 123;
class node_metrics;

// What a node can ask about itself through lp::context().
struct node_identity {
  std::string label;
  std::string group;
  int index = -1;
  std::string program;
  std::string launch;      // the launch policy's flag name, e.g. "local_mt"
  std::string run_dir;     // the launch's run directory; empty under a test controller
  std::vector<int> cores;  // the process is pinned to; empty: not pinned
  std::vector<int> gpus;   // handed to the process (CUDA_VISIBLE_DEVICES)
  node_metrics* metrics = nullptr;  // where lp::metrics records the node's figures
};

// The stop state of one running program in this process, shared by its
// nodes, its launcher and lp::stop().
class launch_state {
 public:
  launch_state(std::string program, std::string policy)
      : program_(std::move(program)), policy_(std::move(policy)) {}

  const std::string& program() const noexcept { return program_; }
  const std::string& policy() const noexcept { return policy_; }

  // Asks every node to stop. The on_stop callbacks run once, on the thread
  // that asked first; any other thread that asks meanwhile waits for them,
  // so that when this returns they have all run (and a launch may shut its
  // nodes down).
  void request_stop() {
    std::vector<std::function<void()>> callbacks;
    {
      std::unique_lock lock(mutex_);
      if (stop_requested_) {
        if (callbacks_runner_ != std::this_thread::get_id())
          changed_.wait(lock, [&] { return callbacks_done_; });
        return;
      }
      stop_requested_ = true;
      callbacks_runner_ = std::this_thread::get_id();
      callbacks.swap(on_stop_);
    }
    changed_.notify_all();
    for (auto& callback : callbacks) {
      try {
        callback();
      } catch (...) {
        fail("on_stop", std::current_exception());
      }
    }
    {
      std::lock_guard lock(mutex_);
      callbacks_done_ = true;
    }
    changed_.notify_all();
  }

  bool stop_requested() const {
    std::lock_guard lock(mutex_);
    return stop_requested_;
  }

  // Stops as request_stop() does, for a stop this process heard of from
  // the rest of the program (a peer refused a call for stopping): nobody
  // here asked for it, so a node process does not pass it on as its own.
  void follow_stop() {
    {
      std::lock_guard lock(mutex_);
      stop_followed_ = stop_followed_ || !stop_requested_;
    }
    request_stop();
  }

  // Whether the stop came by follow_stop() rather than from here.
  bool stop_followed() const {
    std::lock_guard lock(mutex_);
    return stop_followed_;
  }

  bool wait_for_stop(std::chrono::nanoseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return stop_requested_; });
  }

  void wait_for_stop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop_requested_; });
  }

  // Runs now if the program is already stopping.
  void on_stop(std::function<void()> callback) {
    {
      std::lock_guard lock(mutex_);
      if (!stop_requested_) {
        on_stop_.push_back(std::move(callback));
        return;
      }
    }
    callback();
  }

  // A node failed: the first failure is kept for the launcher to report, and
  // the program stops.
  void fail(const std::string& label, std::exception_ptr error) {
    {
      std::lock_guard lock(mutex_);
      if (!failure_) {
        failure_ = error;
        failed_node_ = label;
      }
    }
    request_stop();
  }

  // Says which node failed and how, if one did; returns the exit status
  // a launch gives for it (1, or 0 when no node failed).
  int report_failure(std::ostream& out) const {
    auto summary = failure_summary();
    if (summary.empty()) return 0;
    out << "[lp] " << summary << std::flush;
    return 1;
  }

  // "node <label> failed: <what>" and a newline, or empty if none failed.
  std::string failure_summary() const {
    auto failed = failure();
    if (!failed) return {};
    try {
      std::rethrow_exception(failed);
    } catch (const std::exception& e) {
      return "node " + failed_node() + " failed: " + e.what() + "\n";
    } catch (...) {
      return "node " + failed_node() +
             " failed with an exception not derived from "
             "std::exception\n";
    }
  }

  std::exception_ptr failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
  }

  // How lp::wait_for_runs waits for this launch's runs: the hosts of its
  // nodes know where the runs are (here, or with a launcher elsewhere).
  using runs_waiter = std::function<bool(const std::vector<std::string>& names)>;
  void set_runs_waiter(runs_waiter waiter) {
    std::lock_guard lock(mutex_);
    runs_waiter_ = std::move(waiter);
  }
  // False with no waiter set, or when the program stopped first.
  bool wait_for_runs(const std::vector<std::string>& names) {
    runs_waiter waiter;
    {
      std::lock_guard lock(mutex_);
      waiter = runs_waiter_;
    }
    return waiter && waiter(names);
  }
  std::string failed_node() const {
    std::lock_guard lock(mutex_);
    return failed_node_;
  }

 private:
  const std::string program_, policy_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_requested_ = false;
  bool stop_followed_ = false;
  bool callbacks_done_ = false;
  std::thread::id callbacks_runner_;
  std::vector<std::function<void()>> on_stop_;
  std::exception_ptr failure_;
  std::string failed_node_;
  runs_waiter runs_waiter_;
};

// The node whose code this thread is running (its run(), a handler, its
// constructor), if any.
struct current_node {
  const node_identity* identity = nullptr;
  launch_state* launch = nullptr;
  // When the caller of the call this thread answers stops waiting
  // (lp::caller_deadline()).
  std::chrono::steady_clock::time_point call_deadline =
      std::chrono::steady_clock::time_point::max();
};

inline current_node& this_thread_node() {
  thread_local current_node current;
  return current;
}

// A peer said that the program stops. This process's part of it stops too,
// before the caller hears of it, so that lp::stop_requested() is true by
// the time the call fails with lp::stopping. Outside a node (a test's own
// calls) nothing here belongs to the program.
inline void stop_this_threads_program() {
  if (auto* launch = this_thread_node().launch) launch->follow_stop();
}

class node_scope {
 public:
  node_scope(const node_identity& identity, launch_state& launch,
             std::chrono::steady_clock::time_point call_deadline =
                 std::chrono::steady_clock::time_point::max())
      : saved_(this_thread_node()) {
    this_thread_node() = {&identity, &launch, call_deadline};
  }
  node_scope(const node_scope&) = delete;
  node_scope& operator=(const node_scope&) = delete;
  ~node_scope() { this_thread_node() = saved_; }

 private:
  current_node saved_;
};

// Every program running in this process, so that lp::stop() from main or a
// signal reaches them all.
class launch_registry {
 public:
  static launch_registry& get() {
    static launch_registry registry;
    return registry;
  }
  void add(const std::shared_ptr<launch_state>& launch) {
    std::lock_guard lock(mutex_);
    launches_.push_back(launch);
  }
  void remove(const std::shared_ptr<launch_state>& launch) {
    std::lock_guard lock(mutex_);
    std::erase(launches_, launch);
  }
  std::vector<std::shared_ptr<launch_state>> all() const {
    std::lock_guard lock(mutex_);
    return launches_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<launch_state>> launches_;
};

}  // namespace lp::detail
