#pragma once

// The launcher of a program whose nodes are processes: it makes the run
// directory, keeps the rendezvous, serves the status page and watches that
// the nodes beyond loopback still answer; its processes are supervised
// (supervision.hpp: started, restarted as their groups allow, stopped in
// order) and known (unit_table.hpp); at the end it says how each that
// failed ended.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/process_options.hpp>
#include <launchpad/detail/process/reachability.hpp>
#include <launchpad/detail/process/supervision.hpp>
#include <launchpad/detail/process/unit_logs.hpp>
#include <launchpad/detail/process/unit_table.hpp>
#include <launchpad/detail/python/python_node.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

class process_launch {
 public:
  process_launch(const program& graph, process_options options)
      : graph_(graph),
        options_(with_defaults(std::move(options))),
        run_dir_(options_.run_dir.empty()
                     ? run_directory(graph.name(),
                                     options_.process.insecure ? "" : make_secret(),
                                     "/tmp", options_.tls)
                     : run_directory(run_directory::adopt{}, options_.run_dir)),
        tls_(run_dir_.tls().empty()
                 ? nullptr
                 : std::make_shared<const tls_context>(run_dir_.tls())),
        logs_(options_.process.terminal, options_.process.log_dir, run_dir_.path()),
        units_(graph, options_.stop_when_runs_finish),
        supervision_(units_, options_, logs_, run_dir_.path(),
                     "lp-" + graph.name() + "-" + std::to_string(::getpid())) {
    graph_access::check_defined(graph);
    check_python_nodes(graph, options_.process.python);
    // Before any node can print; an adopted directory's maker told already.
    if (options_.run_dir.empty()) run_dir_.announce(std::cerr);
    logs_.make_dir();
    if (options_.place) units_.place_units(options_.gpus);
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
            [this](const std::string& label) { units_.run_finished(label); },
            [this](const std::vector<std::string>& names,
                   std::chrono::milliseconds wait) {
              return units_.runs_finished(names, wait);
            },
            {},  // it sees its processes end
            {}},
        options_.bind_host, tls_);
    status_ = start_status_page(
        graph_, options_.policy, secret(), run_dir(), options_.status_port,
        [this] { return node_states(); }, tls_);
    watch_reachability();
    supervision_.start(*rendezvous_);
  }
  process_launch(const process_launch&) = delete;
  process_launch& operator=(const process_launch&) = delete;
  ~process_launch() {
    status_.reset();  // it asks what follows
    supervision_.end();
    reachability_.reset();
    rendezvous_.reset();
    logs_.close();
  }

  // Asks every node process to stop (SIGTERM), then kills those still there
  // after the termination notice. False if the program stops already.
  bool request_stop() { return units_.request_stop(); }

  // Waits until every node process has ended; true if all ended cleanly.
  bool wait() { return units_.wait(); }

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
          units_.kill_now();
        });
    return wait();
  }

  // As wait(), at most `timeout`: whether every node process has ended.
  bool wait_for(std::chrono::nanoseconds timeout) { return units_.wait_for(timeout); }

  // Waits until the run() of every node named (a label or a group's name)
  // has returned, or the program has stopped. True in the first case.
  bool wait_finished(const std::vector<std::string>& names) {
    std::optional<bool> outcome;
    while (!(outcome = units_.runs_finished(names, std::chrono::hours(1)))) {
    }
    return *outcome;
  }

  bool stop_requested() const { return units_.stop_requested(); }

  // One line per failed node with its last output, for the user.
  std::string summary() const {
    std::string text;
    for (const auto& f : units_.failures()) {
      text += "[lp] node " + f.unit + " failed: " + f.how + "\n";
      text += quoted_last_lines(f.last_lines);
    }
    return text;
  }

  const std::string& secret() const { return run_dir_.secret(); }
  // Null for a launch without TLS.
  const std::shared_ptr<const tls_context>& tls() const { return tls_; }
  const std::string& run_dir() const { return run_dir_.path(); }
  const std::string& rendezvous_url() const { return rendezvous_->url(); }
  const status_server* status_page() const { return status_.get(); }

  // Label -> URL of the nodes serving now.
  std::map<std::string, std::string> urls() const {
    std::map<std::string, std::string> out;
    for (const auto& spec : graph_.nodes())
      if (auto where = rendezvous_->find(spec.label))
        out[spec.label] = where->url(tls_ != nullptr);
    return out;
  }

  // The process ids of the node processes now running.
  std::vector<pid_t> pids() const { return units_.pids(); }

 private:
  static process_options with_defaults(process_options options) {
    if (options.executable.empty()) options.executable = this_executable();
    if (options.arguments.empty()) options.arguments.push_back(options.executable);
    return options;
  }

  // Each node as the launcher sees it, for the status page.
  std::vector<node_status> node_states() {
    std::vector<node_status> out;
    for (auto& unit : units_.states()) {
      // The same last lines for every node of a colocated group's process.
      unit.status.last_lines = logs_.last_lines(unit.name);
      for (const auto& label : unit.labels) {
        auto node = unit.status;
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

  // Nodes beyond loopback, of groups with a health_timeout, are asked
  // whether they answer; one that does not for that long is lost.
  void watch_reachability() {
    std::vector<reachability_watch::target> targets;
    for (const auto& unit : plan_units(graph_))
      if (unit.settings.health_timeout.count() > 0)
        targets.push_back({unit.name, unit.labels.front(), unit.settings.health_timeout});
    if (targets.empty()) return;
    reachability_ = std::make_unique<reachability_watch>(
        std::move(targets),
        [this](const std::string& label) -> std::optional<reachability_watch::serving> {
          auto where = rendezvous_->find(label);
          if (!where || !beyond_loopback(where->host)) return std::nullopt;
          if (auto restarts = units_.restarts_of(label))
            return reachability_watch::serving{*where, *restarts};
          return std::nullopt;
        },
        [this](const std::string& name, std::chrono::milliseconds silence) {
          units_.lose(name, silence);
        },
        tls_.get());
  }

  const program& graph_;
  process_options options_;
  run_directory run_dir_;
  std::shared_ptr<const tls_context> tls_;  // null: plain HTTP
  unit_logs logs_;
  unit_table units_;
  std::unique_ptr<rendezvous_server> rendezvous_;
  std::unique_ptr<status_server> status_;
  std::unique_ptr<reachability_watch> reachability_;
  // Last: should the constructor throw, its thread ends before what it
  // uses (the rendezvous) goes.
  unit_supervisor supervision_;
};

}  // namespace lp::detail
