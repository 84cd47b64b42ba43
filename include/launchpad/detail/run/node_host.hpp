#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <iostream>
#include <launchpad/detail/call/node_addresses.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/run/direct_channel.hpp>
#include <launchpad/detail/run/run_directory.hpp>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/serve/http_server.hpp>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/util/launch_state.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// How a launch policy wants its nodes hosted; the --lp_ flags fill most of it.
struct host_options {
  std::string policy;               // the launch policy's flag name
  std::vector<std::string> labels;  // the nodes to run here; empty: all of them
  std::shared_ptr<directory> nodes = std::make_shared<local_directory>();
  std::string secret;  // empty: serve and call without one (--lp_insecure)
  std::string bind_host = "127.0.0.1";
  std::string run_dir;  // the launch's run directory, if it has one
  std::size_t max_body_bytes = std::size_t{256} << 20;
  server_limits limits;  // each node's server's
  // Clients call nodes of this process without HTTP (lp::direct_calls<P>).
  bool direct_calls = false;
  // Told when a node's run() returns (a launcher in another process).
  std::function<void(const std::string& label)> run_finished;
  // Stop once every run() here has returned: right when this process hosts
  // the whole program and no test wants to look at it afterwards.
  bool stop_when_runs_finish = true;
};

// The limits of a node's server that the --lp_ flags set.
inline server_limits limits_of(const launch_flags& flags) {
  server_limits limits;
  limits.header_timeout = std::chrono::seconds(flags.header_timeout_secs);
  limits.min_bytes_per_second = flags.min_rate_kib_per_sec << 10;
  limits.max_connections = flags.max_connections;
  return limits;
}

// Runs some nodes of a program in this process: each its own HTTP server,
// each run() its own thread. Every launch policy hosts its nodes with this:
// all of them in one process (multi-threading), or a few per process.
class node_host {
 public:
  node_host(const program& graph, host_options options)
      : graph_(graph),
        options_(std::move(options)),
        state_(std::make_shared<launch_state>(graph.name(), options_.policy)) {
    launch_registry::get().add(state_);
    keep_large_blocks();
    try {
      start(graph);
    } catch (...) {
      shutdown();
      throw;
    }
  }
  node_host(const node_host&) = delete;
  node_host& operator=(const node_host&) = delete;
  ~node_host() { shutdown(); }

  launch_state& state() { return *state_; }
  const std::string& secret() const { return options_.secret; }

  // A channel to the node with this label; one per node, shared.
  std::shared_ptr<channel> connect(const std::string& label) {
    std::lock_guard lock(mutex_);
    auto& slot = channels_[label];
    if (slot) return slot;
    if (options_.direct_calls)
      for (auto& node : nodes_)
        if (node->identity.label == label) return slot = std::make_shared<direct_channel>(label, *node->served);
    return slot = std::make_shared<http_channel>(label, options_.nodes, channel_options());
  }

  // Waits until the run() of every node named (labels or group names) has
  // returned, or the program stops. True in the first case.
  bool wait_finished(const std::vector<std::string>& names) {
    auto wanted = runnable_labels(graph_, names);
    auto done = [&] {
      return std::includes(finished_.begin(), finished_.end(), wanted.begin(), wanted.end());
    };
    std::unique_lock lock(mutex_);
    finished_changed_.wait(lock, [&] { return done() || state_->stop_requested(); });
    return done();
  }

  // Label -> URL of the nodes hosted here.
  std::map<std::string, std::string> urls() const {
    std::map<std::string, std::string> out;
    for (const auto& node : nodes_) out[node->identity.label] = node->server->url();
    return out;
  }

  // Stops the program (if nobody has yet) and waits until everything it
  // started here is gone: run() threads joined, calls drained, servers
  // closed, nodes destroyed. Safe to call twice.
  void shutdown() {
    std::lock_guard once(shutdown_mutex_);
    if (done_) return;
    done_ = true;
    state_->request_stop();
    for (auto& node : nodes_)
      if (node->runner.joinable()) node->runner.join();
    for (auto& node : nodes_) node->server->drain();
    // Our own idle connections would keep servers' threads waiting out their
    // keep-alive; close them first so the servers stop at once.
    options_.nodes->close();
    {
      std::lock_guard lock(mutex_);
      for (auto& [label, channel] : channels_) channel->close();
    }
    for (auto& node : nodes_) node->server->stop();
    while (!nodes_.empty()) nodes_.pop_back();
    launch_registry::get().remove(state_);
  }

 private:
  struct hosted_node {
    node_identity identity;
    bool has_run = false;
    std::unique_ptr<node_instance> instance;
    std::unique_ptr<served_node> served;
    std::unique_ptr<http_server> server;
    std::thread runner;
  };

  http_channel::options channel_options() const {
    http_channel::options settings;
    settings.secret = options_.secret;
    return settings;
  }

  bool hosts(const std::string& label) const {
    if (options_.labels.empty()) return true;
    for (const auto& wanted : options_.labels)
      if (wanted == label) return true;
    return false;
  }

  void start(const program& graph) {
    auto connector = [this](const std::string& label) { return connect(label); };
    for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
      const auto& spec = graph.nodes()[i];
      if (!hosts(spec.label)) continue;
      auto node = std::make_unique<hosted_node>();
      node->identity = {spec.label,      spec.group,      spec.index,
                        graph.name(),    state_->policy(), options_.run_dir};
      node->has_run = spec.has_run;
      node_scope scope(node->identity, *state_);
      node->instance = graph_access::build(graph, i, connector);
      node->served.reset(new served_node{*node->instance, node->identity, *state_, {}});
      node->server = std::make_unique<http_server>(*node->served, options_.secret,
                                                   options_.max_body_bytes, options_.limits);
      nodes_.push_back(std::move(node));
    }
    for (const auto& wanted : options_.labels) graph.node(wanted);  // throws for a stranger
    for (auto& node : nodes_) {
      node->server->start(options_.bind_host, 0);
      options_.nodes->publish(node->identity.label, node->server->bound());
      if (!options_.run_dir.empty())
        record_node_address(options_.run_dir, node->identity.label, node->server->url());
      std::cerr << "[lp] " << node->identity.label << " serving at " << node->server->url()
                << std::endl;
    }
    std::size_t runnable = 0;
    for (const auto& node : nodes_) runnable += node->has_run;
    // wait_finished also wakes when the program stops.
    state_->on_stop([this] {
      std::lock_guard lock(mutex_);
      finished_changed_.notify_all();
    });
    for (auto& node : nodes_) {
      if (!node->has_run) continue;
      node->runner = std::thread([this, node = node.get(), runnable] {
        node_scope scope(node->identity, *state_);
        try {
          node->instance->run();
        } catch (const stopping&) {
          // A call refused because the program stops ends a run() as
          // cleanly as the stop does, once this process knows of the stop.
          if (!state_->stop_requested())
            state_->fail(node->identity.label, std::current_exception());
          return;
        } catch (...) {
          state_->fail(node->identity.label, std::current_exception());
          return;
        }
        if (options_.run_finished) options_.run_finished(node->identity.label);
        bool all_done;
        {
          std::lock_guard lock(mutex_);
          finished_.insert(node->identity.label);
          all_done = finished_.size() == runnable;
          finished_changed_.notify_all();
        }
        // A program whose run() nodes have all returned has nothing left to do.
        if (all_done && options_.stop_when_runs_finish && !options_.run_finished)
          state_->request_stop();
      });
    }
  }

  const program& graph_;
  host_options options_;
  std::shared_ptr<launch_state> state_;
  std::vector<std::unique_ptr<hosted_node>> nodes_;
  std::mutex mutex_;
  std::condition_variable finished_changed_;
  std::set<std::string> finished_;
  std::map<std::string, std::shared_ptr<channel>> channels_;
  std::mutex shutdown_mutex_;
  bool done_ = false;
};

}  // namespace lp::detail
