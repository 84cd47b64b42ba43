#pragma once

// The launches whose nodes are all threads of this process: local_mt and
// test_mt from a command line, and a test's lp::controller of test_mt.

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/host/controlled_launch.hpp>
#include <launchpad/detail/host/local_launchers.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/node_streams.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp {

namespace detail {

// What the status page shows of nodes that are all threads of this process.
inline status_server::source node_states(node_host& launch, const node_streams& streams) {
  auto state = launch.shared_state();
  return [state, urls = launch.urls(), pids = launch.pids(), &streams] {
    auto failed = state->failure() ? state->failed_node() : std::string();
    auto summary = failed.empty() ? std::string() : state->failure_summary();
    std::vector<node_status> out;
    for (const auto& [label, url] : urls) {
      node_status node;
      node.label = label;
      node.url = url;
      node.pid = pids.at(label);
      node.state = label == failed           ? node_state::failed
                   : state->stop_requested() ? node_state::stopped
                                             : node_state::serving;
      if (label == failed) node.failure = summary;
      node.last_lines = streams.last_lines(label);
      out.push_back(std::move(node));
    }
    return out;
  };
}

// Whose launch of threads this is. A user's (local_mt) owns the process:
// it stops on SIGINT and SIGTERM, tells its nodes' lines apart and serves
// the status page. A test's (test_mt) leaves all three to the test.
enum class thread_launch { test, user };

// Runs the program to its end in this process; returns the exit status.
LP_API int run_in_process(const program& graph, thread_launch kind,
                          transport_kind transport, const launch_settings& settings);

inline int launcher<test_multi_threading>::run(const program& graph,
                                               transport_kind transport,
                                               const launch_settings& settings) {
  return run_in_process(graph, thread_launch::test, transport, settings);
}

inline int launcher<local_multi_threading>::run(const program& graph,
                                                transport_kind transport,
                                                const launch_settings& settings) {
  return run_in_process(graph, thread_launch::user, transport, settings);
}

// A test's launch of nodes as threads of this process.
class threads_launch final : public controlled_launch {
 public:
  threads_launch(const program& graph, host_options settings)
      : host_(graph, std::move(settings)) {}

  std::shared_ptr<channel> connect(const std::string& label) override {
    return host_.connect(label);
  }
  std::map<std::string, std::string> urls() const override { return host_.urls(); }
  const std::string& secret() const override { return host_.secret(); }
  const std::string& run_dir() const override { return no_run_dir_; }
  std::vector<pid_t> pids() const override { return {::getpid()}; }
  bool wait_finished(const std::vector<std::string>& names) override {
    return host_.wait_finished(names);
  }

  bool wait(std::optional<std::chrono::nanoseconds> timeout) override {
    if (!timeout)
      host_.state().wait_for_stop();
    else if (!host_.state().wait_for_stop(*timeout))
      return false;
    host_.shutdown();
    if (auto failure = host_.state().failure()) {
      try {
        std::rethrow_exception(failure);
      } catch (...) {
        std::throw_with_nested(node_failure(summary()));
      }
    }
    return true;
  }

  bool stop() override {
    host_.shutdown();
    return !host_.state().failure();
  }
  bool stop_requested() const override { return host_.state().stop_requested(); }
  std::string summary() const override { return host_.state().failure_summary(); }

 private:
  node_host host_;
  const std::string no_run_dir_;
};

}  // namespace detail

}  // namespace lp
