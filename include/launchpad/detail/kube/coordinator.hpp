#pragma once

// The coordinator pod of a Kubernetes launch. The Job controller starts,
// restarts and ends the node pods; the coordinator only hears from them. It
// keeps the rendezvous, decides when the program stops, stops it, shows
// the status page, and tells how the program ended by its exit status.
//
// What it hears: a node process publishes its nodes when it serves, and
// says how it ended. A process killed outright (SIGKILL, out of memory, its
// host gone) says nothing; the coordinator finds it by probing every
// process that serves. A process that failed more often than its group's
// max_restarts will not be started again (backoffLimitPerIndex says the
// same to the Job controller), so the program fails and stops.

#include <sys/stat.h>
#include <unistd.h>

#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/finished_runs.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/program.hpp>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail::kube {

class coordinator {
 public:
  // Probes of a serving process: every `probe_period`; `lost_after` failed
  // ones in a row and it is taken for gone.
  static constexpr auto probe_period = std::chrono::seconds(1);
  static constexpr int lost_after = 3;

  // `run_dir`: where the Secret is mounted; `launch`: the launch's name.
  coordinator(const program& graph, const launch_settings& settings,
              const std::string& run_dir, const std::string& launch)
      : coordinator(graph, settings, run_directory::credentials_of(run_dir), launch) {}

  coordinator(const coordinator&) = delete;
  coordinator& operator=(const coordinator&) = delete;

 private:
  coordinator(const program& graph, const launch_settings& settings,
              const std::pair<std::string, tls_credentials>& found,
              const std::string& launch)
      : notice_(std::chrono::seconds(settings.process.termination_notice_secs)),
        secret_(found.first),
        own_dir_(coordinator_dir(launch), secret_),
        runs_(graph) {
    const auto& credentials = found.second;
    if (!credentials.empty())
      tls_ = std::make_shared<const tls_context>(
          credentials, "the Secret's " + std::string(run_directory::certificate_file));
    for (auto& unit : plan_units(graph)) {
      for (const auto& label : unit.labels) unit_of_[label] = unit.name;
      units_.emplace(unit.name,
                     unit_state{.plan = unit, .where = {}, .last_failure = {}});
    }
    rendezvous_ = std::make_unique<rendezvous_server>(
        secret_,
        rendezvous_server::callbacks{
            .stop_requested =
                [this](const std::string& label) {
                  {
                    // It stops already: no need to tell it.
                    std::lock_guard lock(mutex_);
                    if (auto it = unit_of_.find(label); it != unit_of_.end())
                      units_.at(it->second).asked_to_stop = true;
                  }
                  stop(label + " asked the program to stop");
                },
            .run_finished = [this](const std::string& label) { run_finished(label); },
            .runs_finished =
                [this](const std::vector<std::string>& names,
                       std::chrono::milliseconds wait) {
                  return runs_finished(names, wait);
                },
            .process_ended =
                [this](const std::string& label, const std::string& failure,
                       bool unrecoverable) {
                  ended(label, failure.empty() ? std::nullopt : std::optional(failure),
                        unrecoverable);
                },
            .published = [this](const std::string& label,
                                const address& where) { published(label, where); }},
        "0.0.0.0", tls_, rendezvous_port);
    // On loopback in the pod, as every launcher's page: `kubectl
    // port-forward` reaches it there, and nothing else does.
    status_ = start_status_page(
        graph, policy_kind::kubernetes, secret_, own_dir_.path(),
        port_or_off{status_port}, [this] { return statuses(); }, tls_);
  }

 public:
  // Runs until the program has ended; its exit status: 0 when it stopped
  // cleanly, 1 when a node failed beyond its restarts.
  int run() {
    std::cerr << "[lp] coordinating " << units_.size()
              << (units_.size() == 1 ? " process" : " processes") << "; rendezvous at "
              << rendezvous_->url() << std::endl;
    // The pod's end (kubectl delete, a drain) stops the program in order.
    stop_on_signals signals([this](const stop_on_signals::origin& from) {
      stop("the coordinator got signal " + std::to_string(from.signal));
    });
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      changed_.wait_for(lock, probe_period);
      if (!stopping_) probe(lock);
    }
    // Every process that serves hears of the stop. The Job controller
    // starts pods in no order, and a short program may end before one of
    // them joined: it gets the same notice to join, hears of the stop when
    // it does (published), and ends cleanly rather than wait for a
    // coordinator that is gone.
    rendezvous_->close();
    auto deadline = std::chrono::steady_clock::now() + notice_ + std::chrono::seconds(5);
    for (auto& [name, unit] : units_)
      if (unit.where && !unit.asked_to_stop) tell_stop(lock, name, *unit.where);
    while (std::chrono::steady_clock::now() < deadline && serving() + joining() > 0) {
      changed_.wait_for(lock, probe_period);
      probe(lock);
    }
    for (auto& [name, unit] : units_)
      if (unit.where)
        std::cerr << "[lp] " << name
                  << " did not say that it ended within the termination "
                     "notice; its pod's own grace period ends it"
                  << std::endl;
      else if (yet_to_join(unit))
        std::cerr
            << "[lp] " << name
            << " never joined the launch: its pod did not start, or did not reach "
               "the rendezvous in time (kubectl describe pod says why); if it starts "
               "now, it fails after waiting 5 minutes for the coordinator"
            << std::endl;
    std::cerr << "[lp] the program "
              << (failure_ ? "failed: " + *failure_ : "stopped cleanly") << std::endl;
    return failure_ ? 1 : 0;
  }

 private:
  struct unit_state {
    unit_plan plan;
    std::optional<address> where;  // while a process of it serves
    int failures = 0;
    int missed_probes = 0;
    bool ever_served = false;
    bool asked_to_stop = false;
    std::string last_failure;
  };

  void stop(const std::string& why) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    std::cerr << "[lp] stopping: " << why << std::endl;
    changed_.notify_all();
  }

  void published(const std::string& label, const address& where) {
    std::unique_lock lock(mutex_);
    auto& unit = units_.at(unit_of_.at(label));
    if (label != unit.plan.labels.front()) return;
    // Started while the program stops (a restart under way): it stops too.
    if (stopping_) {
      unit.where = where;
      unit.ever_served = true;
      tell_stop(lock, unit.plan.name, where);
      return;
    }
    // A new process while the last one still served: that one ended
    // without a word.
    if (unit.where && !(*unit.where == where)) lose(unit, "its process was replaced");
    unit.where = where;
    unit.ever_served = true;
    unit.missed_probes = 0;
    std::cerr << "[lp] " << unit.plan.name << " serves at " << where.host << ":"
              << where.port << std::endl;
  }

  void ended(const std::string& label, std::optional<std::string> failure,
             bool unrecoverable = false) {
    {
      std::lock_guard lock(mutex_);
      auto it = unit_of_.find(label);
      if (it == unit_of_.end()) return;
      auto& unit = units_.at(it->second);
      unit.where.reset();
      // Its Job does not start it again either (FailIndex on its exit
      // status, manifests.hpp).
      if (failure && unrecoverable) unit.failures = unit.plan.settings.max_restarts;
      if (failure)
        fail(unit, *failure);
      else
        std::cerr << "[lp] " << unit.plan.name << " ended" << std::endl;
    }
    changed_.notify_all();
  }

  // Counts a failure of `unit`'s process; past its restarts, the program's.
  // Called with the lock held.
  void fail(unit_state& unit, const std::string& what) {
    ++unit.failures;
    unit.last_failure = what;
    rendezvous_->withdraw(unit.plan.labels.front(), !stopping_, what);
    if (stopping_) return;
    int allowed = unit.plan.settings.max_restarts;
    if (unit.failures <= allowed) {
      std::cerr << "[lp] " << unit.plan.name << " failed (" << what
                << "); its Job starts it again (" << unit.failures << " of " << allowed
                << " restarts)" << std::endl;
      return;
    }
    failure_ = "node " + unit.plan.name + " failed: " + what;
    stopping_ = true;
    std::cerr << "[lp] stopping: " << *failure_ << std::endl;
  }

  void lose(unit_state& unit, const std::string& why) {
    unit.where.reset();
    fail(unit, "its pod ended without a word (" + why + ")");
  }

  std::size_t serving() const {
    std::size_t count = 0;
    for (const auto& [name, unit] : units_) count += unit.where.has_value();
    return count;
  }

  // A unit whose pod has not served yet and may still: not one that failed
  // past its restarts.
  static bool yet_to_join(const unit_state& unit) {
    return !unit.ever_served && unit.failures <= unit.plan.settings.max_restarts;
  }

  std::size_t joining() const {
    std::size_t count = 0;
    for (const auto& [name, unit] : units_) count += yet_to_join(unit);
    return count;
  }

  // Connects to every serving process once, without the lock: a silent
  // peer must not hold up the rendezvous.
  void probe(std::unique_lock<std::mutex>& lock) {
    std::vector<std::pair<std::string, address>> targets;
    for (const auto& [name, unit] : units_)
      if (unit.where) targets.emplace_back(name, *unit.where);
    lock.unlock();
    std::vector<std::pair<std::string, bool>> answers;
    for (const auto& [name, where] : targets) {
      bool answered = true;
      try {
        http_connection::open(where.host, where.port,
                              std::chrono::steady_clock::now() + probe_period,
                              tls_.get());
      } catch (const http_connection::failure&) {
        answered = false;
      }
      answers.emplace_back(name, answered);
    }
    lock.lock();
    for (std::size_t i = 0; i < answers.size(); ++i) {
      auto& unit = units_.at(answers[i].first);
      if (!unit.where || !(*unit.where == targets[i].second))
        continue;  // news came meanwhile
      unit.missed_probes = answers[i].second ? 0 : unit.missed_probes + 1;
      if (unit.missed_probes >= lost_after) lose(unit, "it stopped answering");
    }
  }

  // Sends the process POST /lp/v1/stop, the stop lp::stop() makes.
  // `where` is a copy: the unit's own may change while the lock is off.
  void tell_stop(std::unique_lock<std::mutex>& lock, const std::string& name,
                 address where) {
    lock.unlock();
    try {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      auto connection =
          http_connection::open(where.host, where.port, deadline, tls_.get());
      std::string reply;
      connection->post(
          protocol::path::stop,
          secret_.empty() ? std::string() : "Authorization: Bearer " + secret_ + "\r\n",
          "", deadline, reply, 1 << 16);
    } catch (const std::exception& e) {
      std::cerr << "[lp] could not tell " << name << " to stop: " << e.what()
                << std::endl;
    }
    lock.lock();
  }

  void run_finished(const std::string& label) {
    bool all = false;
    {
      std::lock_guard lock(mutex_);
      all = runs_.finish(label);
    }
    changed_.notify_all();
    // A program whose run() nodes have all returned has nothing left to do.
    if (all) stop("the run() of every node returned");
  }

  std::optional<bool> runs_finished(const std::vector<std::string>& names,
                                    std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    return runs_.wait(lock, changed_, names, wait, [&] { return stopping_; });
  }

  std::vector<node_status> statuses() {
    std::lock_guard lock(mutex_);
    std::vector<node_status> all;
    for (const auto& [name, unit] : units_)
      for (const auto& label : unit.plan.labels) {
        node_status status;
        status.label = label;
        status.restarts = unit.failures;
        status.failure = unit.last_failure;
        if (unit.where) {
          status.state = node_state::serving;
          status.url = unit.where->url(tls_ != nullptr);
        } else if (unit.failures > unit.plan.settings.max_restarts) {
          status.state = node_state::failed;
        } else if (unit.failures > 0) {
          status.state = node_state::restarting;
        } else {
          status.state = unit.ever_served ? node_state::stopped : node_state::starting;
        }
        all.push_back(std::move(status));
      }
    return all;
  }

  // A directory of its own: where --lp_status finds the page, in the pod.
  // It goes as a run directory does: with the coordinator, whatever is in
  // it, or with its reaper if the coordinator is killed (a pod's /tmp may
  // outlive its process: a container restarted in place).
  class own_directory {
   public:
    own_directory(std::string path, const std::string& secret) : path_(std::move(path)) {
      auto& reaper = group_reaper::of_this_process();
      run_directory::clear(path_);  // a stale one, of a pod that ran here before
      if (::mkdir(path_.c_str(), 0700) != 0)
        throw launch_error("the coordinator cannot make " + path_ + " in its pod (" +
                           std::strerror(errno) + "); its image needs a writable /tmp");
      reaper.clear(path_);
      if (!secret.empty())
        write_private_file(path_ + "/" + protocol::run_directory::secret, secret + "\n");
    }
    own_directory(const own_directory&) = delete;
    own_directory& operator=(const own_directory&) = delete;
    ~own_directory() {
      run_directory::clear(path_);
      group_reaper::of_this_process().spare(path_);
    }
    const std::string& path() const { return path_; }

   private:
    std::string path_;
  };

  const std::chrono::seconds notice_;
  const std::string secret_;
  own_directory own_dir_;
  finished_runs runs_;  // under mutex_
  std::shared_ptr<const tls_context> tls_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, unit_state> units_;     // by unit name
  std::map<std::string, std::string> unit_of_;  // label -> unit name
  bool stopping_ = false;
  std::optional<std::string> failure_;
  std::unique_ptr<rendezvous_server> rendezvous_;
  std::unique_ptr<status_server> status_;
};

}  // namespace lp::detail::kube
