#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <iostream>
#include <launchpad/detail/http_channel.hpp>
#include <launchpad/detail/http_server.hpp>
#include <launchpad/detail/runtime.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// Runs every node of a program in this process: each its own loopback HTTP
// server, each run() its own thread. Both multi-threading launch policies
// are this, with different ways to wait and to stop.
class in_process_launch {
 public:
  in_process_launch(const program& graph, std::string policy)
      : state_(std::make_shared<launch_state>(graph.name(), std::move(policy))),
        book_(std::make_shared<address_book>()) {
    launch_registry::get().add(state_);
    try {
      start(graph);
    } catch (...) {
      shutdown();
      throw;
    }
  }
  in_process_launch(const in_process_launch&) = delete;
  in_process_launch& operator=(const in_process_launch&) = delete;
  ~in_process_launch() { shutdown(); }

  launch_state& state() { return *state_; }

  // A channel to the node with this label; one per node, shared.
  std::shared_ptr<channel> connect(const std::string& label) {
    std::lock_guard lock(mutex_);
    auto& slot = channels_[label];
    if (!slot) slot = std::make_shared<http_channel>(label, book_, http_channel::options{});
    return slot;
  }

  std::map<std::string, std::string> urls() const {
    std::map<std::string, std::string> out;
    for (const auto& node : nodes_) out[node->identity.label] = node->server->url();
    return out;
  }

  // Stops the program (if nobody has yet) and waits until everything it
  // started is gone: run() threads joined, calls drained, servers closed,
  // nodes destroyed. Safe to call twice.
  void shutdown() {
    std::lock_guard once(shutdown_mutex_);
    if (done_) return;
    done_ = true;
    state_->request_stop();
    for (auto& node : nodes_)
      if (node->runner.joinable()) node->runner.join();
    for (auto& node : nodes_) node->server->drain();
    // Our own idle connections would keep server threads waiting out their
    // keep-alive; close them first so the servers stop at once.
    book_->close();
    {
      std::lock_guard lock(mutex_);
      for (auto& [label, channel] : channels_) channel->close();
    }
    for (auto& node : nodes_) node->server->stop();
    while (!nodes_.empty()) nodes_.pop_back();
    launch_registry::get().remove(state_);
  }

 private:
  struct running_node {
    node_identity identity;
    std::unique_ptr<node_instance> instance;
    std::unique_ptr<http_server> server;
    std::thread runner;
  };

  void start(const program& graph) {
    auto connector = [this](const std::string& label) { return connect(label); };
    for (const auto& spec : graph.nodes()) {
      auto node = std::make_unique<running_node>();
      node->identity = {spec.label, spec.group, spec.index, graph.name(), state_->policy()};
      node_scope scope(node->identity, *state_);
      node->instance = spec.build(connector);
      node->server = std::make_unique<http_server>(*node->instance, node->identity, *state_);
      nodes_.push_back(std::move(node));
    }
    for (auto& node : nodes_) {
      node->server->start("127.0.0.1", 0);
      auto port = node->server->url().substr(node->server->url().rfind(':') + 1);
      book_->publish(node->identity.label, {"127.0.0.1", std::stoi(port)});
      std::cerr << "[lp] " << node->identity.label << " serving at " << node->server->url()
                << std::endl;
    }
    std::size_t runnable = 0;
    for (const auto& spec : graph.nodes()) runnable += spec.has_run;
    remaining_runs_ = runnable;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (!graph.nodes()[i].has_run) continue;
      auto* node = nodes_[i].get();
      node->runner = std::thread([this, node] {
        node_scope scope(node->identity, *state_);
        try {
          node->instance->run();
        } catch (...) {
          state_->fail(node->identity.label, std::current_exception());
        }
        // A program whose run() nodes have all returned has nothing left to do.
        if (--remaining_runs_ == 0) state_->request_stop();
      });
    }
  }

  std::shared_ptr<launch_state> state_;
  std::shared_ptr<address_book> book_;
  std::vector<std::unique_ptr<running_node>> nodes_;
  std::atomic<std::size_t> remaining_runs_{0};
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<http_channel>> channels_;
  std::mutex shutdown_mutex_;
  bool done_ = false;
};

}  // namespace lp::detail
