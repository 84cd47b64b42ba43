#pragma once

// The launcher of a program whose nodes are processes: it starts them, keeps
// the rendezvous, restarts the failed ones its groups allow, stops them all
// in order, and says how each ended.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <launchpad/detail/observe/process_figures.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/child_env.hpp>
#include <launchpad/detail/process/log_tail.hpp>
#include <launchpad/detail/process/placement.hpp>
#include <launchpad/detail/process/reachability.hpp>
#include <launchpad/detail/process/rendezvous.hpp>
#include <launchpad/detail/process/tmux.hpp>
#include <launchpad/detail/python/python_node.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// How a launch starts its units and signals them. Left empty (local_mp), a
// unit is the binary itself, in a process group of its own; the Slurm
// launch runs it as a job step, through srun.
struct unit_runner {
  // The command that each unit named here runs under, its program and
  // arguments following (srun and the step's options): given whole before
  // the launch, as a unit's command never depends on when it starts.
  std::map<std::string, std::vector<std::string>> commands_before;
  // Sends `signal` to what runs `unit`; `pid` is the process started for it.
  std::function<void(const std::string& unit, pid_t pid, int signal)> signal;
  // The wait status of the unit's own task, from that of the process
  // started for it; left empty, the same.
  int (*task_status)(int status) = nullptr;
};

// A process of a launch: a node, or a colocated group's nodes.
struct unit_plan {
  std::string name;  // the node's label, or the colocated group's name
  std::vector<std::string> labels;
  group_settings settings;
};

inline std::vector<unit_plan> plan_units(const program& graph) {
  std::vector<unit_plan> units;
  std::map<std::string, std::size_t> colocated;
  for (const auto& spec : graph.nodes()) {
    auto settings = graph.settings_of(spec.group);
    if (settings.colocated) {
      auto [it, added] = colocated.emplace(spec.group, units.size());
      if (added) units.push_back({spec.group, {}, settings});
      units[it->second].labels.push_back(spec.label);
    } else {
      units.push_back({spec.label, {spec.label}, settings});
    }
  }
  return units;
}

struct process_options {
  policy_kind policy = policy_kind::local_mp;
  std::string executable;  // default: this program
  // The nodes' argv, argv[0] first: written from the launch's settings
  // (cli/command_line.hpp's child_arguments), which every node reads again.
  std::vector<std::string> arguments;
  // How the node processes run, as --lp_terminal, --lp_log_dir (default:
  // logs/ in the run directory), --lp_termination_notice_secs, --lp_insecure
  // and --lp_python say (gpus: see `gpus` below).
  node_process_settings process;
  // The launch's TLS credentials (launch_tls.hpp); empty: plain HTTP. An
  // adopted run directory brings its own.
  tls_credentials tls;
  // Stop once every run() has returned; a test controller leaves that to the
  // test, which may still want to ask the nodes that serve.
  bool stop_when_runs_finish = true;
  std::string run_dir;  // adopt this run directory; default: make one under /tmp
  std::string bind_host = "127.0.0.1";  // where the rendezvous listens
  bool direct_calls = false;            // calls between nodes of one process skip HTTP
  port_or_off status_port;              // the launcher's status page; default: none
  unit_runner runner;
  // Place the processes here (a local launch; Slurm places its own): hand
  // out these GPUs, pin to cores.
  bool place = false;
  std::vector<int> gpus;
};

class process_launch {
 public:
  using clock = std::chrono::steady_clock;

  struct failure {
    std::string unit;  // the process: a node's label, or a colocated group's name
    std::string how;
    std::vector<std::string> last_lines;
    bool unreachable = false;  // the launcher lost it (reachability.hpp)
  };

  process_launch(const program& graph, process_options options)
      : graph_(graph),
        options_(std::move(options)),
        run_dir_(options_.run_dir.empty()
                     ? run_directory(graph.name(),
                                     options_.process.insecure ? "" : make_secret(),
                                     "/tmp", options_.tls)
                     : run_directory(run_directory::adopt{}, options_.run_dir)),
        tls_(run_dir_.tls().empty()
                 ? nullptr
                 : std::make_shared<const tls_context>(run_dir_.tls())) {
    graph_access::check_defined(graph);
    check_python_nodes(graph, options_.process.python);
    // Before any node can print; an adopted directory's maker told already.
    if (options_.run_dir.empty()) run_dir_.announce(std::cerr);
    if (options_.executable.empty()) options_.executable = this_executable();
    if (options_.arguments.empty()) options_.arguments.push_back(options_.executable);
    make_log_dir();
    plan_units();
    rendezvous_ = std::make_unique<rendezvous_server>(
        secret(),
        rendezvous_server::callbacks{
            [this](const std::string& label) {
              // A node passes on every stop signal it cannot tell came from
              // here (under Slurm, none): during a stop, that is no news.
              if (request_stop())
                std::cerr << "[lp] " << label << " asked the program to stop"
                          << std::endl;
            },
            [this](const std::string& label) { run_finished(label); },
            [this](const std::vector<std::string>& names,
                   std::chrono::milliseconds wait) { return runs_finished(names, wait); },
            {},  // it sees its processes end
            {}},
        options_.bind_host, tls_);
    status_ = start_status_page(
        graph_, options_.policy, secret(), run_dir(), options_.status_port,
        [this] { return node_states(); }, tls_);
    watch_reachability();
    supervisor_ = std::thread([this] { supervise(); });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return started_ || ended_; });
    if (start_error_) std::rethrow_exception(start_error_);
  }
  process_launch(const process_launch&) = delete;
  process_launch& operator=(const process_launch&) = delete;
  ~process_launch() {
    status_.reset();  // it asks what follows
    request_stop();
    if (supervisor_.joinable()) supervisor_.join();
    reachability_.reset();
    rendezvous_.reset();
    output_.close();
  }

  // Asks every node process to stop (SIGTERM), then kills those still there
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

  // Kills every node process at once (a second Ctrl+C).
  void kill_now() {
    {
      std::lock_guard lock(mutex_);
      stop_requested_ = kill_now_ = true;
    }
    changed_.notify_all();
  }

  // Waits until every node process has ended; true if all ended cleanly.
  bool wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ended_; });
    return failures_.empty();
  }

  // As wait(), for a launcher run from a terminal: Ctrl+C or SIGTERM stops
  // every node (each gets SIGTERM), a second request kills them at once. A
  // signal that only repeats the first (timeout signals its child, then the
  // child's group) is no second request; stop_on_signals tells them apart.
  bool wait_stopping_on_signals() {
    stop_on_signals signals(
        [this](int signal) {
          std::cerr << "[lp] " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                    << ": stopping every node (again to kill them at once)" << std::endl;
          request_stop();
        },
        [this](int) {
          std::cerr << "[lp] second signal: killing every node" << std::endl;
          kill_now();
        });
    return wait();
  }

  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return ended_; });
  }

  // Waits until the run() of every node named (a label or a group's name)
  // has returned, or the program has stopped. True in the first case.
  bool wait_finished(const std::vector<std::string>& names) {
    std::optional<bool> outcome;
    while (!(outcome = runs_finished(names, std::chrono::hours(1)))) {
    }
    return *outcome;
  }

  // As wait_finished, at most `wait`: nullopt if neither came by then.
  std::optional<bool> runs_finished(const std::vector<std::string>& names,
                                    std::chrono::milliseconds wait) {
    auto wanted = runnable_labels(graph_, names);
    auto done = [&] {
      return std::includes(finished_.begin(), finished_.end(), wanted.begin(),
                           wanted.end());
    };
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, wait, [&] { return stop_requested_ || done(); }))
      return std::nullopt;
    return done();
  }

  bool stop_requested() const {
    std::lock_guard lock(mutex_);
    return stop_requested_;
  }

  std::vector<failure> failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }

  // One line per failed node with its last output, for the user.
  std::string summary() const {
    std::string text;
    for (const auto& f : failures()) {
      text += "[lp] node " + f.unit + " failed: " + f.how + "\n";
      text += quoted_last_lines(f.last_lines);
    }
    return text;
  }

  const std::string& secret() const { return run_dir_.secret(); }
  // Null for a launch without TLS.
  const std::shared_ptr<const tls_context>& tls() const { return tls_; }
  const std::string& run_dir() const { return run_dir_.path(); }
  const run_directory& directory() const { return run_dir_; }
  const std::string& rendezvous_url() const { return rendezvous_->url(); }
  const status_server* status_page() const { return status_.get(); }

  // Each node as the launcher sees it, for the status page.
  std::vector<node_status> node_states() {
    struct seen {
      std::string name;
      std::vector<std::string> labels;
      node_status status;
    };
    std::vector<seen> units;
    {
      std::lock_guard lock(mutex_);
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
          if (f.unit == u.name) {
            status.state = f.unreachable ? node_state::unreachable : node_state::failed;
            status.failure = f.how;
          }
        units.push_back({u.name, u.labels, std::move(status)});
      }
    }
    std::vector<node_status> out;
    for (auto& u : units) {
      // The same last lines for every node of a colocated group's process.
      u.status.last_lines = last_lines(u.name);
      for (const auto& label : u.labels) {
        auto node = u.status;
        node.label = label;
        if (auto where = rendezvous_->find(label)) {
          node.url = where->url(tls_ != nullptr);
          if (node.state == node_state::starting) node.state = node_state::serving;
        }
        out.push_back(std::move(node));
      }
    }
    return out;
  }

  // Label -> URL of the nodes serving now.
  std::map<std::string, std::string> urls() const {
    std::map<std::string, std::string> out;
    for (const auto& spec : graph_.nodes())
      if (auto where = rendezvous_->find(spec.label))
        out[spec.label] = where->url(tls_ != nullptr);
    return out;
  }

  // The process ids of the node processes now running.
  std::vector<pid_t> pids() const {
    std::lock_guard lock(mutex_);
    std::vector<pid_t> out;
    for (const auto& u : units_)
      if (u.pid > 0 && !u.ended) out.push_back(u.pid);
    return out;
  }

 private:
  // One process: a node, or a colocated group's nodes.
  struct unit {
    unit(std::string process_name, group_settings group)
        : name(std::move(process_name)), settings(group) {}
    std::string name;
    std::vector<std::string> labels;
    group_settings settings;
    pid_t pid = -1;
    int restarts = 0;
    std::optional<clock::time_point> restart_at;
    bool ended = false;
    bool killed = false;  // by us, after the termination notice
    // How the launcher lost it (reachability.hpp), while that process lives.
    std::optional<std::string> lost;
    bool abandoned = false;  // lost, and its process ended by us
    std::string log_path;
    placement where;
  };

  bool log_files() const { return options_.process.terminal != terminal_kind::current; }
  std::chrono::seconds termination_notice() const {
    return std::chrono::seconds(options_.process.termination_notice_secs);
  }

  std::string log_path_of(std::string unit) const {
    std::replace(unit.begin(), unit.end(), '/', '_');
    return options_.process.log_dir + "/" + unit + ".log";
  }

  void open_tmux() {
    std::vector<std::pair<std::string, std::string>> windows;
    for (const auto& u : units_) windows.emplace_back(u.name, u.log_path);
    tmux_.open("lp-" + graph_.name() + "-" + std::to_string(::getpid()), windows);
  }

  void make_log_dir() {
    if (!log_files()) return;
    if (options_.process.log_dir.empty())
      options_.process.log_dir = run_dir_.path() + "/logs";
    ::mkdir(options_.process.log_dir.c_str(), 0700);
    std::cerr << "[lp] node logs in " << options_.process.log_dir << std::endl;
  }

  void plan_units() {
    for (auto& planned : detail::plan_units(graph_)) {
      units_.push_back(unit{planned.name, planned.settings});
      units_.back().labels = std::move(planned.labels);
    }
    if (options_.place) {
      std::vector<std::pair<std::string, group_settings>> processes;
      for (const auto& u : units_) processes.emplace_back(u.name, u.settings);
      auto where = place(processes, options_.gpus, cores_allowed());
      for (std::size_t i = 0; i < units_.size(); ++i)
        units_[i].where = std::move(where[i]);
    }
    for (const auto& spec : graph_.nodes())
      if (spec.has_run) runnable_.insert(spec.label);
  }

  void signal(const unit& u, int signal) {
    if (options_.runner.signal)
      options_.runner.signal(u.name, u.pid, signal);
    else
      ::kill(-u.pid, signal);
  }

  void run_finished(const std::string& label) {
    {
      std::lock_guard lock(mutex_);
      finished_.insert(label);
      // A program whose run() nodes have all returned has nothing left to do.
      if (options_.stop_when_runs_finish && !runnable_.empty() && finished_ == runnable_)
        stop_requested_ = true;
    }
    changed_.notify_all();
  }

  void start(unit& u) {
    child_process child{options_.executable, options_.arguments, {}, -1, -1};
    std::string labels;
    for (const auto& label : u.labels) labels += (labels.empty() ? "" : ",") + label;
    if (auto before = options_.runner.commands_before.find(u.name);
        before != options_.runner.commands_before.end() && !before->second.empty()) {
      std::vector<std::string> command = before->second;
      command.push_back(child.executable);
      command.insert(command.end(),
                     child.arguments.begin() + (child.arguments.empty() ? 0 : 1),
                     child.arguments.end());
      child.executable = command.front();
      child.arguments = std::move(command);
    }
    child.environment = {
        std::string(child_env::nodes) + "=" + labels,
        std::string(child_env::rendezvous) + "=" + rendezvous_->url(),
        std::string(child_env::launcher) + "=" + std::to_string(::getpid()),
        std::string(child_env::policy) + "=" + std::string(name_of(options_.policy)),
        std::string(child_env::run_dir) + "=" + run_dir(),
        std::string(child_env::transport) + "=" +
            (options_.direct_calls ? "direct" : "http"),
        std::string(restarts_env) + "=" + std::to_string(u.restarts),
    };
    for (const auto& [name, value] : u.settings.env)
      child.environment.push_back(name + "=" + value);
    if (!u.where.gpus.empty()) {
      child.environment.push_back("CUDA_VISIBLE_DEVICES=" + index_text(u.where.gpus));
      child.environment.push_back(std::string(child_env::gpus) + "=" +
                                  index_text(u.where.gpus));
    }
    if (!u.where.cores.empty())
      child.environment.push_back(std::string(child_env::cores) + "=" +
                                  index_text(u.where.cores));
    if (log_files()) {
      u.log_path = log_path_of(u.name);
      int fd =
          ::open(u.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) throw launch_error("cannot open the log file " + u.log_path);
      child.output_fd = child.error_fd = fd;
      auto pid = spawn(child);
      reaper_.watch(pid);
      ::close(fd);
      std::lock_guard lock(mutex_);
      u.pid = pid;
    } else {
      child.output_fd = output_.open(u.name, 1);
      child.error_fd = output_.open(u.name, 2);
      auto pid = spawn(child);
      reaper_.watch(pid);
      ::close(child.output_fd);
      ::close(child.error_fd);
      std::lock_guard lock(mutex_);
      u.pid = pid;
    }
    std::lock_guard lock(mutex_);
    u.ended = false;
    u.restart_at.reset();
    u.lost.reset();
    u.abandoned = false;
  }

  // Nodes beyond loopback, of groups with a health_timeout, are asked
  // whether they answer; one that does not for that long is lost.
  void watch_reachability() {
    std::vector<reachability_watch::target> targets;
    for (const auto& u : units_)
      if (u.settings.health_timeout.count() > 0)
        targets.push_back({u.name, u.labels.front(), u.settings.health_timeout});
    if (targets.empty()) return;
    reachability_ = std::make_unique<reachability_watch>(
        std::move(targets),
        [this](const std::string& label) -> std::optional<reachability_watch::serving> {
          auto where = rendezvous_->find(label);
          if (!where || !beyond_loopback(where->host)) return std::nullopt;
          std::lock_guard lock(mutex_);
          for (const auto& u : units_)
            if (u.labels.front() == label)
              return reachability_watch::serving{*where, u.restarts};
          return std::nullopt;
        },
        [this](const std::string& name, std::chrono::milliseconds silence) {
          lose(name, silence);
        },
        tls_.get());
  }

  void lose(const std::string& name, std::chrono::milliseconds silence) {
    std::lock_guard lock(mutex_);
    if (stop_requested_) return;  // the stop ends it anyway
    for (auto& u : units_) {
      if (u.name != name || u.ended || u.lost) continue;
      auto silent = "no answer to the launcher for " + std::to_string(silence.count()) +
                    " ms, past its group's health_timeout of " +
                    std::to_string(u.settings.health_timeout.count()) +
                    " ms (a network partition, or its host is down)";
      u.lost = "unreachable: " + silent + ", and its process was ended";
      std::cerr << "[lp] node " << name << " is unreachable: " << silent
                << "; ending its process" << std::endl;
    }
    changed_.notify_all();
  }

  // A lost process cannot be asked to stop, nor be waited for: the process
  // here that stands for it (itself, or its srun) ends at once, and its task
  // ends where it runs when its host hears (under Slurm, scancel's).
  void abandon_lost() {
    for (auto& u : units_) {
      {
        std::lock_guard lock(mutex_);
        if (!u.lost || u.abandoned || u.ended || u.pid <= 0) continue;
        u.abandoned = true;
      }
      ::kill(-u.pid, SIGKILL);
      if (options_.runner.signal) options_.runner.signal(u.name, u.pid, SIGKILL);
    }
  }

  // A process's last lines, from its log or from its pipes, which are
  // waited for up to `drain` while something still holds them open.
  std::vector<std::string> last_lines(const std::string& unit,
                                      std::chrono::milliseconds drain = {}) {
    if (log_files()) return log_tail(log_path_of(unit));
    return output_.last_lines(unit, drain);
  }

  // Runs on one thread from start to end: the node processes die with the
  // thread that started them (PR_SET_PDEATHSIG), so it must outlive them.
  void supervise() {
    try {
      for (auto& u : units_) start(u);
      if (options_.process.terminal == terminal_kind::tmux) open_tmux();
      {
        std::lock_guard lock(mutex_);
        started_ = true;
      }
      changed_.notify_all();
    } catch (...) {
      std::lock_guard lock(mutex_);
      start_error_ = std::current_exception();
      stop_requested_ = true;
    }
    bool stopping = false;
    bool killed_all = false;
    clock::time_point notice_ends{};
    for (;;) {
      reap(stopping);
      bool stop, kill;
      {
        std::unique_lock lock(mutex_);
        stop = stop_requested_;
        kill = kill_now_;
      }
      if (stop && !stopping) {
        stopping = true;
        notice_ends = clock::now() + termination_notice();
        rendezvous_->close();
        for (auto& u : units_)
          if (!u.ended && u.pid > 0) signal(u, SIGTERM);
      }
      if (stopping && !killed_all && (kill || clock::now() >= notice_ends)) {
        killed_all = true;
        for (auto& u : units_)
          if (!u.ended && u.pid > 0) {
            u.killed = !kill;
            signal(u, SIGKILL);
          }
      }
      if (!stopping) abandon_lost();
      if (!stopping) restart_due();
      if (std::all_of(units_.begin(), units_.end(),
                      [](auto& u) { return u.ended || u.pid <= 0; }) &&
          stopping)
        break;
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::milliseconds(10));
    }
    tmux_.close();
    std::lock_guard lock(mutex_);
    ended_ = true;
    changed_.notify_all();
  }

  void reap(bool stopping) {
    for (auto& u : units_) {
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
      if (!stopping) stopping = stop_requested();
      if (options_.runner.task_status) status = options_.runner.task_status(status);
      {
        std::lock_guard lock(mutex_);
        u.ended = true;
      }
      bool clean =
          stopping && ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                       (WIFSIGNALED(status) && !u.killed &&
                        (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT)));
      if (clean) continue;
      auto lost = [&] {
        std::lock_guard lock(mutex_);
        return u.lost;
      }();
      std::string how = lost       ? *lost
                        : u.killed ? "did not stop within the termination notice of " +
                                         std::to_string(termination_notice().count()) +
                                         " s, and was killed"
                        : WIFEXITED(status) && WEXITSTATUS(status) == hung_exit_status
                            ? "hung: a call waited past its group's health_timeout, and "
                              "its process was ended"
                        : WIFEXITED(status) && WEXITSTATUS(status) == hung_run_exit_status
                            ? "hung: its run() made no sign of progress for its group's "
                              "health_timeout, and its process was ended (a long step "
                              "can call lp::heartbeat(), launchpad_client.heartbeat() in "
                              "Python; or raise health_timeout)"
                            : describe_status(status);
      if (!stopping && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        how = "exited before the program stopped";
      bool unrecoverable =
          WIFEXITED(status) && WEXITSTATUS(status) == unrecoverable_exit_status;
      if (unrecoverable) how = "could not start, for a reason a restart would not mend";
      if (!stopping && !unrecoverable && u.restarts < u.settings.max_restarts) {
        auto backoff = u.settings.restart_backoff * (1 << std::min(u.restarts, 10));
        {
          std::lock_guard lock(mutex_);  // the status page reads them
          ++u.restarts;
          u.restart_at = clock::now() + backoff;
        }
        std::cerr << "[lp] node " << u.name << " " << how << "; restarting it in "
                  << backoff.count() << " ms (restart " << u.restarts << " of "
                  << u.settings.max_restarts << ")" << std::endl;
        for (const auto& label : u.labels) rendezvous_->withdraw(label, true, how);
        continue;
      }
      for (const auto& label : u.labels) rendezvous_->withdraw(label, false, how);
      // A pipe some stray grandchild still holds open is not waited for long.
      auto lines = last_lines(u.name, std::chrono::seconds(2));
      std::lock_guard lock(mutex_);
      failures_.push_back({u.name, how, std::move(lines), lost.has_value()});
      stop_requested_ = true;
    }
  }

  void restart_due() {
    for (auto& u : units_) {
      if (!u.ended || !u.restart_at || clock::now() < *u.restart_at) continue;
      try {
        start(u);
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        u.restart_at.reset();
        failures_.push_back(
            {u.name, std::string("could not be restarted: ") + e.what(), {}});
        stop_requested_ = true;
      }
    }
  }

  const program& graph_;
  process_options options_;
  run_directory run_dir_;
  std::shared_ptr<const tls_context> tls_;  // null: plain HTTP
  std::vector<unit> units_;
  std::set<std::string> runnable_;
  output_pump output_;
  group_reaper reaper_;
  std::unique_ptr<rendezvous_server> rendezvous_;
  std::unique_ptr<status_server> status_;
  std::unique_ptr<reachability_watch> reachability_;
  std::thread supervisor_;
  tmux_session tmux_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool started_ = false;
  bool ended_ = false;
  bool stop_requested_ = false;
  bool kill_now_ = false;
  std::exception_ptr start_error_;
  std::set<std::string> finished_;
  std::vector<failure> failures_;
};

}  // namespace lp::detail
