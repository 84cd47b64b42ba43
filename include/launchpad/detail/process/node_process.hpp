#pragma once

// The two sides of a launch whose nodes are processes, as local_mp and a
// test's lp::controller of test_mp runs it: the node process, and the
// launcher.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/host/controlled_launch.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/process/host_address.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/process/rendezvous.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

namespace detail {

// The value the launcher set in this process's environment, taken out of
// it: the node's own child processes must not take themselves for nodes.
LP_API std::optional<std::string> take_env(const char* name);

// True in a process that a multi-processing launcher started as a node.
LP_API bool is_node_process();

// Where a node process runs, as its policy sees it.
struct node_site {
  // local_mp and test_mp: the launcher is this process's parent, which
  // signals it; elsewhere the launcher is on another host (Slurm) or in
  // another pod (Kubernetes), and every signal comes from elsewhere.
  bool launcher_is_parent = true;
  std::string bind_host = "127.0.0.1";
  std::string advertise_host;  // what the nodes publish; empty: bind_host
  // Lead a process group of its own, and end it with this process: under
  // Slurm nothing else ends what a node starts (in a pod, the container's
  // end does).
  bool own_group = false;
  // Tell the launcher how this process ended: it cannot see the exit
  // status (Kubernetes).
  bool report_end = false;
  // Without --lp_checkpoint_dir, checkpoints go to the run directory; a
  // pod's is its Secret, read-only, and a pod keeps none without a volume.
  bool checkpoints_in_run_dir = true;
};

// The life of a node process: host its nodes, publish them, stop when the
// launcher says so (SIGTERM), or when one of them calls lp::stop() or a
// stop signal comes from elsewhere, which the launcher then passes on to
// every other process.
LP_API int run_node_process(const program& graph, transport_kind transport,
                            const launch_settings& settings,
                            const std::optional<node_site>& chosen_site = std::nullopt);

// What the launcher of node processes takes from the launch's settings;
// the nodes' command line is written from them.
LP_API process_options process_options_from(const launch_settings& settings,
                                            policy_kind policy, transport_kind transport);

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

}  // namespace detail

}  // namespace lp
