#pragma once

// What a launch of processes knows of its processes (a node's, or a
// colocated group's), under one lock: each one's pid, restarts and state,
// whether the program stops, what failed, which run()s returned. The
// supervising thread (supervision.hpp) changes it; the launcher, the
// rendezvous, the status page and the reachability watch ask it, and wait
// on it.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <launchpad/detail/process/finished_runs.hpp>
#include <launchpad/detail/process/placement.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/program.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

// A process of a launch that failed, as the user reads it.
struct unit_failure {
  std::string unit;  // the process: a node's label, or a colocated group's name
  std::string how;
  std::vector<std::string> last_lines;
  bool unreachable = false;  // the launcher lost it (reachability.hpp)
};

class unit_table {
 public:
  using clock = std::chrono::steady_clock;

  // A process as the status page shows it, before its nodes' addresses.
  struct seen {
    std::string name;
    std::vector<std::string> labels;
    node_status status;
  };

  // `stop_when_runs_finish`: the program stops once every run() has
  // returned (not under a test, which may still look at it).
  unit_table(const program& graph, bool stop_when_runs_finish)
      : runs_(graph), stop_when_runs_finish_(stop_when_runs_finish) {
    for (auto& planned : plan_units(graph)) units_.emplace_back(std::move(planned));
  }
  unit_table(const unit_table&) = delete;
  unit_table& operator=(const unit_table&) = delete;

  // Hands out `gpus` and this host's cores to the processes (a local
  // launch; Slurm places its own).
  void place_units(const std::vector<int>& gpus) {
    std::vector<std::pair<std::string, group_settings>> processes;
    for (const auto& u : units_) processes.emplace_back(u.plan.name, u.plan.settings);
    auto where = place(processes, gpus, cores_allowed());
    for (std::size_t i = 0; i < units_.size(); ++i) units_[i].where = std::move(where[i]);
  }

  // Asks every process to stop (SIGTERM), then kills those still there
  // after the termination notice. False if the program stops already.
  bool request_stop() {
    bool news = false;
    {
      std::lock_guard lock(mutex_);
      news = !stop_requested_;
      stop_requested_ = true;
    }
    changed_.notify_all();
    return news;
  }

  // Kills every process at once (a second Ctrl+C).
  void kill_now() {
    {
      std::lock_guard lock(mutex_);
      stop_requested_ = kill_now_ = true;
    }
    changed_.notify_all();
  }

  // Waits until every process has ended; true if all ended cleanly.
  bool wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ended_; });
    return failures_.empty();
  }

  // As wait(), at most `timeout`: whether they have all ended.
  bool wait_for(std::chrono::nanoseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return ended_; });
  }

  bool stop_requested() const {
    std::lock_guard lock(mutex_);
    return stop_requested_;
  }

  std::vector<unit_failure> failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }

  // A node's run() returned, its process says.
  void run_finished(const std::string& label) {
    {
      std::lock_guard lock(mutex_);
      // A program whose run() nodes have all returned has nothing left to do.
      if (runs_.finish(label) && stop_when_runs_finish_) stop_requested_ = true;
    }
    changed_.notify_all();
  }

  // Whether the run() of every node named has returned (true) or the
  // program stops (false); nullopt if neither within `wait`.
  std::optional<bool> runs_finished(const std::vector<std::string>& names,
                                    std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    return runs_.wait(lock, changed_, names, wait, [&] { return stop_requested_; });
  }

  // The ids of the processes now running.
  std::vector<pid_t> pids() const {
    std::lock_guard lock(mutex_);
    std::vector<pid_t> out;
    for (const auto& u : units_)
      if (u.pid > 0 && !u.ended) out.push_back(u.pid);
    return out;
  }

  // Each process as the launcher sees it.
  std::vector<seen> states() const {
    std::lock_guard lock(mutex_);
    std::vector<seen> out;
    for (const auto& u : units_) {
      node_status status;
      status.pid = u.pid;
      status.restarts = u.restarts;
      status.state = u.restart_at ? node_state::restarting
                     : u.ended    ? node_state::stopped
                     : u.lost     ? node_state::unreachable
                                  : node_state::starting;
      if (u.lost && !u.ended) status.failure = *u.lost;
      for (const auto& f : failures_)
        if (f.unit == u.plan.name) {
          status.state = f.unreachable ? node_state::unreachable : node_state::failed;
          status.failure = f.how;
        }
      out.push_back({u.plan.name, u.plan.labels, std::move(status)});
    }
    return out;
  }

  // How often the process that hosts `label` first was restarted; nullopt
  // for a label no process hosts first.
  std::optional<int> restarts_of(const std::string& label) const {
    std::lock_guard lock(mutex_);
    for (const auto& u : units_)
      if (u.plan.labels.front() == label) return u.restarts;
    return std::nullopt;
  }

  // The launcher has heard nothing from the process `name` for `silence`
  // (reachability.hpp): it is lost, and the supervision ends it.
  void lose(const std::string& name, std::chrono::milliseconds silence) {
    std::lock_guard lock(mutex_);
    if (stop_requested_) return;  // the stop ends it anyway
    for (auto& u : units_) {
      if (u.plan.name != name || u.ended || u.lost) continue;
      auto silent = "no answer to the launcher for " + std::to_string(silence.count()) +
                    " ms, past its group's health_timeout of " +
                    std::to_string(u.plan.settings.health_timeout.count()) +
                    " ms (a network partition, or its host is down)";
      u.lost = "unreachable: " + silent + ", and its process was ended";
      std::cerr << "[lp] node " << name << " is unreachable: " << silent
                << "; ending its process" << std::endl;
    }
    changed_.notify_all();
  }

 private:
  // The supervising thread starts, reaps and restarts the processes.
  friend class unit_supervisor;

  struct unit {
    explicit unit(unit_plan planned) : plan(std::move(planned)) {}
    unit_plan plan;
    // What the supervising thread alone changes, under the lock where
    // others read it.
    pid_t pid = -1;
    int restarts = 0;
    std::optional<clock::time_point> restart_at;
    bool ended = false;
    bool killed = false;  // by us, after the termination notice
    // How the launcher lost it (reachability.hpp), while that process lives.
    std::optional<std::string> lost;
    bool abandoned = false;  // lost, and its process ended by us
    placement where;
  };

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<unit> units_;
  finished_runs runs_;
  const bool stop_when_runs_finish_;
  bool started_ = false;
  bool ended_ = false;
  bool stop_requested_ = false;
  bool kill_now_ = false;
  std::exception_ptr start_error_;
  std::vector<unit_failure> failures_;
};

}  // namespace lp::detail
