#pragma once

// The processes of a launch, from their start to their end: one thread
// starts each (a node, or a colocated group's nodes), reaps it, restarts a
// failed one as its group allows, and, once the program stops, signals
// them all (SIGTERM, then SIGKILL after the termination notice); it notes
// in the unit table (unit_table.hpp) how each that failed ended. The
// launcher (launcher.hpp) runs it.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/observe/process_figures.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/placement.hpp>
#include <launchpad/detail/process/process_options.hpp>
#include <launchpad/detail/process/unit_logs.hpp>
#include <launchpad/detail/process/unit_table.hpp>
#include <launchpad/detail/process/units.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace lp::detail {

// The command and environment a process of a launch starts with: the
// launch's program and arguments (under the runner's command, if any), and
// what it learns from its launcher (child_env.hpp).
inline child_process unit_command(const process_options& options, const unit_plan& plan,
                                  const placement& where, int restarts,
                                  const std::string& rendezvous_url,
                                  const std::string& run_dir) {
  child_process child{options.executable, options.arguments, {}, -1, -1};
  if (auto before = options.runner.commands_before.find(plan.name);
      before != options.runner.commands_before.end() && !before->second.empty()) {
    std::vector<std::string> command = before->second;
    command.push_back(child.executable);
    command.insert(command.end(),
                   child.arguments.begin() + (child.arguments.empty() ? 0 : 1),
                   child.arguments.end());
    child.executable = command.front();
    child.arguments = std::move(command);
  }
  std::string labels;
  for (const auto& label : plan.labels) labels += (labels.empty() ? "" : ",") + label;
  child.environment = {
      std::string(child_env::nodes) + "=" + labels,
      std::string(child_env::rendezvous) + "=" + rendezvous_url,
      std::string(child_env::launcher) + "=" + std::to_string(::getpid()),
      std::string(child_env::policy) + "=" + std::string(name_of(options.policy)),
      std::string(child_env::run_dir) + "=" + run_dir,
      std::string(child_env::transport) + "=" +
          (options.direct_calls ? "direct" : "http"),
      std::string(restarts_env) + "=" + std::to_string(restarts),
  };
  for (const auto& [name, value] : plan.settings.env)
    child.environment.push_back(name + "=" + value);
  if (!where.gpus.empty()) {
    child.environment.push_back("CUDA_VISIBLE_DEVICES=" + index_text(where.gpus));
    child.environment.push_back(std::string(child_env::gpus) + "=" +
                                index_text(where.gpus));
  }
  if (!where.cores.empty())
    child.environment.push_back(std::string(child_env::cores) + "=" +
                                index_text(where.cores));
  return child;
}

// How a process ended, by its wait status, in words: `killed` after the
// termination notice, or hung (its watchdog's exit statuses).
inline std::string how_it_ended(int status, bool killed, std::chrono::seconds notice) {
  if (killed)
    return "did not stop within the termination notice of " +
           std::to_string(notice.count()) + " s, and was killed";
  if (WIFEXITED(status) && WEXITSTATUS(status) == hung_exit_status)
    return "hung: a call waited past its group's health_timeout, and its process was "
           "ended";
  if (WIFEXITED(status) && WEXITSTATUS(status) == hung_run_exit_status)
    return "hung: its run() made no sign of progress for its group's health_timeout, "
           "and its process was ended (a long step can call lp::heartbeat(), "
           "launchpad_client.heartbeat() in Python; or raise health_timeout)";
  return describe_status(status);
}

class unit_supervisor {
 public:
  using clock = unit_table::clock;

  // All but the table's name outlive it; `session`: the name of its tmux
  // session, if it opens one.
  unit_supervisor(unit_table& table, const process_options& options, unit_logs& logs,
                  const std::string& run_dir, std::string session)
      : table_(table),
        options_(options),
        logs_(logs),
        run_dir_(run_dir),
        session_(std::move(session)) {}
  unit_supervisor(const unit_supervisor&) = delete;
  unit_supervisor& operator=(const unit_supervisor&) = delete;
  ~unit_supervisor() { end(); }

  // Starts every process, on a thread of its own, which then supervises
  // them; returns once they are all started. The nodes publish themselves
  // at `rendezvous`, which outlives the thread.
  void start(rendezvous_server& rendezvous) {
    rendezvous_ = &rendezvous;
    thread_ = std::thread([this] { supervise(); });
    std::unique_lock lock(table_.mutex_);
    table_.changed_.wait(lock, [&] { return table_.started_ || table_.ended_; });
    if (table_.start_error_) std::rethrow_exception(table_.start_error_);
  }

  // Stops the program, if it still runs, and waits for the thread to end.
  void end() {
    table_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  using unit = unit_table::unit;

  std::chrono::seconds termination_notice() const {
    return std::chrono::seconds(options_.process.termination_notice_secs);
  }

  void signal(const unit& u, int signal) {
    if (options_.runner.signal)
      options_.runner.signal(u.plan.name, u.pid, signal);
    else
      ::kill(-u.pid, signal);
  }

  void start(unit& u) {
    auto child =
        unit_command(options_, u.plan, u.where, u.restarts, rendezvous_->url(), run_dir_);
    auto [out, err] = logs_.open(u.plan.name);
    child.output_fd = out;
    child.error_fd = err;
    auto pid = spawn(child);
    reaper_.watch(pid);
    ::close(out);
    if (err != out) ::close(err);
    std::lock_guard lock(table_.mutex_);
    u.pid = pid;
    u.ended = false;
    u.restart_at.reset();
    u.lost.reset();
    u.abandoned = false;
  }

  // A lost process cannot be asked to stop, nor be waited for: the process
  // here that stands for it (itself, or its srun) ends at once, and its task
  // ends where it runs when its host hears (under Slurm, scancel's).
  void abandon_lost() {
    for (auto& u : table_.units_) {
      {
        std::lock_guard lock(table_.mutex_);
        if (!u.lost || u.abandoned || u.ended || u.pid <= 0) continue;
        u.abandoned = true;
      }
      ::kill(-u.pid, SIGKILL);
      if (options_.runner.signal) options_.runner.signal(u.plan.name, u.pid, SIGKILL);
    }
  }

  // Runs on one thread from start to end: the node processes die with the
  // thread that started them (PR_SET_PDEATHSIG), so it must outlive them.
  void supervise() {
    auto& units = table_.units_;
    try {
      for (auto& u : units) start(u);
      std::vector<std::string> names;
      for (const auto& u : units) names.push_back(u.plan.name);
      logs_.follow(session_, names);
      {
        std::lock_guard lock(table_.mutex_);
        table_.started_ = true;
      }
      table_.changed_.notify_all();
    } catch (...) {
      std::lock_guard lock(table_.mutex_);
      table_.start_error_ = std::current_exception();
      table_.stop_requested_ = true;
    }
    bool stopping = false;
    bool killed_all = false;
    clock::time_point notice_ends{};
    for (;;) {
      reap(stopping);
      bool stop, kill;
      {
        std::unique_lock lock(table_.mutex_);
        stop = table_.stop_requested_;
        kill = table_.kill_now_;
      }
      if (stop && !stopping) {
        stopping = true;
        notice_ends = clock::now() + termination_notice();
        rendezvous_->close();
        for (auto& u : units)
          if (!u.ended && u.pid > 0) signal(u, SIGTERM);
      }
      if (stopping && !killed_all && (kill || clock::now() >= notice_ends)) {
        killed_all = true;
        for (auto& u : units)
          if (!u.ended && u.pid > 0) {
            u.killed = !kill;
            signal(u, SIGKILL);
          }
      }
      if (!stopping) abandon_lost();
      if (!stopping) restart_due();
      if (std::all_of(units.begin(), units.end(),
                      [](auto& u) { return u.ended || u.pid <= 0; }) &&
          stopping)
        break;
      std::unique_lock lock(table_.mutex_);
      table_.changed_.wait_for(lock, std::chrono::milliseconds(10));
    }
    logs_.stop_following();
    std::lock_guard lock(table_.mutex_);
    table_.ended_ = true;
    table_.changed_.notify_all();
  }

  void reap(bool stopping) {
    for (auto& u : table_.units_) {
      if (u.ended || u.pid <= 0) continue;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(u.pid), &info, WEXITED | WNOHANG | WNOWAIT) !=
              0 ||
          info.si_pid != u.pid)
        continue;
      // Whatever the node left in its process group goes too; the group id
      // cannot be reused yet, as the node is not reaped until the next line.
      ::kill(-u.pid, SIGKILL);
      reaper_.forget(u.pid);
      int status = 0;
      ::waitpid(u.pid, &status, 0);
      // A node that passed a stop on (lp::stop(), a signal from elsewhere)
      // told the launcher before it ended, maybe before this thread began
      // that stop: its end is part of it.
      if (!stopping) stopping = table_.stop_requested();
      if (options_.runner.task_status) status = options_.runner.task_status(status);
      {
        std::lock_guard lock(table_.mutex_);
        u.ended = true;
      }
      bool clean =
          stopping && ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                       (WIFSIGNALED(status) && !u.killed &&
                        (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT)));
      if (clean) continue;
      auto lost = [&] {
        std::lock_guard lock(table_.mutex_);
        return u.lost;
      }();
      auto how = lost ? *lost : how_it_ended(status, u.killed, termination_notice());
      if (!stopping && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        how = "exited before the program stopped";
      bool unrecoverable =
          WIFEXITED(status) && WEXITSTATUS(status) == unrecoverable_exit_status;
      if (unrecoverable) how = "could not start, for a reason a restart would not mend";
      const auto& group = u.plan.settings;
      if (!stopping && !unrecoverable && u.restarts < group.max_restarts) {
        auto backoff = group.restart_backoff * (1 << std::min(u.restarts, 10));
        {
          std::lock_guard lock(table_.mutex_);  // the status page reads them
          ++u.restarts;
          u.restart_at = clock::now() + backoff;
        }
        std::cerr << "[lp] node " << u.plan.name << " " << how << "; restarting it in "
                  << backoff.count() << " ms (restart " << u.restarts << " of "
                  << group.max_restarts << ")" << std::endl;
        for (const auto& label : u.plan.labels) rendezvous_->withdraw(label, true, how);
        continue;
      }
      // The failure that ends the program says what its restarts were.
      if (u.restarts > 0)
        how += " after " + std::to_string(u.restarts) +
               (u.restarts == 1 ? " restart" : " restarts") + " (restart_on_failure(" +
               std::to_string(group.max_restarts) + "))";
      for (const auto& label : u.plan.labels) rendezvous_->withdraw(label, false, how);
      // A pipe some stray grandchild still holds open is not waited for long.
      auto lines = logs_.last_lines(u.plan.name, std::chrono::seconds(2));
      std::lock_guard lock(table_.mutex_);
      table_.failures_.push_back({u.plan.name, how, std::move(lines), lost.has_value()});
      table_.stop_requested_ = true;
    }
  }

  void restart_due() {
    for (auto& u : table_.units_) {
      if (!u.ended || !u.restart_at || clock::now() < *u.restart_at) continue;
      try {
        start(u);
      } catch (const std::exception& e) {
        std::lock_guard lock(table_.mutex_);
        u.restart_at.reset();
        table_.failures_.push_back(
            {u.plan.name, std::string("could not be restarted: ") + e.what(), {}});
        table_.stop_requested_ = true;
      }
    }
  }

  unit_table& table_;
  const process_options& options_;
  unit_logs& logs_;
  const std::string& run_dir_;
  const std::string session_;
  rendezvous_server* rendezvous_ = nullptr;
  group_reaper reaper_;
  std::thread thread_;
};

}  // namespace lp::detail
