#pragma once

// The launches whose nodes are processes of this host, as local_mp from a
// command line and a test's lp::controller of test_mp run them: this
// process is their launcher (launcher.hpp), and each node process runs
// main() again (node_process.hpp).

#include <sys/types.h>

#include <chrono>
#include <exception>
#include <iostream>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/host/controlled_launch.hpp>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/process/placement.hpp>
#include <launchpad/detail/process/process_options.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lp::detail {

// local_mp from a command line: this process is the launcher.
inline int launcher<local_multi_processing>::run(const program& graph,
                                                 transport_kind transport,
                                                 const launch_settings& settings) {
  if (settings.process.insecure)
    std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
              << std::endl;
  try {
    auto options = process_options_from(settings, policy_kind::local_mp, transport);
    options.place = true;
    options.gpus =
        settings.process.gpus.empty() ? gpus_found() : index_list(settings.process.gpus);
    options.tls =
        launch_tls(settings.tls, graph.name(), beyond_loopback(options.bind_host));
    process_launch launch(graph, std::move(options));
    announce_checkpoints(graph, checkpoint_dir_of(settings.checkpoints, launch.run_dir()),
                         std::cerr);
    bool clean = launch.wait_stopping_on_signals();
    if (!clean) std::cerr << launch.summary() << std::flush;
    linger(launch.status_page(), settings.status.linger_secs);
    return clean ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}

// A test's launch of nodes as processes; this process is their launcher.
class processes_launch final : public controlled_launch {
 public:
  processes_launch(const program& graph, process_options settings)
      : launch_(graph, std::move(settings)),
        nodes_(std::make_shared<rendezvous_directory>(launch_.rendezvous_url(),
                                                      launch_.secret(), launch_.tls())) {}

  std::shared_ptr<channel> connect(const std::string& label) override {
    http_channel::options settings;
    settings.secret = launch_.secret();
    settings.tls = launch_.tls();
    return std::make_shared<http_channel>(label, nodes_, settings);
  }
  std::map<std::string, std::string> urls() const override { return launch_.urls(); }
  const std::string& secret() const override { return launch_.secret(); }
  const std::string& run_dir() const override { return launch_.run_dir(); }
  std::vector<pid_t> pids() const override { return launch_.pids(); }
  bool wait_finished(const std::vector<std::string>& names) override {
    return launch_.wait_finished(names);
  }

  bool wait(std::optional<std::chrono::nanoseconds> timeout) override {
    if (timeout && !launch_.wait_for(*timeout)) return false;
    if (!launch_.wait()) throw node_failure(summary());
    return true;
  }

  bool stop() override {
    launch_.request_stop();
    nodes_->close();
    return launch_.wait();
  }
  bool stop_requested() const override { return launch_.stop_requested(); }
  std::string summary() const override { return launch_.summary(); }

 private:
  process_launch launch_;
  std::shared_ptr<rendezvous_directory> nodes_;
};

}  // namespace lp::detail
