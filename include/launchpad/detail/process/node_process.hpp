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
#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/host/controlled_launch.hpp>
#include <launchpad/detail/host/launch_tls.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/host/signals.hpp>
#include <launchpad/detail/process/host_address.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/process/rendezvous.hpp>
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

LP_API std::optional<std::string> take_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  std::string copy = value;
  // The node's own child processes must not take themselves for nodes.
  ::unsetenv(name);
  return copy;
}

// True in a process that a multi-processing launcher started as a node.
LP_API bool is_node_process() {
  return std::getenv(child_env::nodes) != nullptr;
}

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
                            const launch_flags& flags,
                            const std::optional<node_site>& chosen_site = std::nullopt) {
  auto labels_text = take_env(child_env::nodes).value_or("");
  auto rendezvous_url = take_env(child_env::rendezvous).value_or("");
  auto launcher = take_env(child_env::launcher).value_or("");
  auto policy = take_env(child_env::policy).value_or("local_mp");
  const auto site = chosen_site.value_or(node_site{});
  auto run_dir = take_env(child_env::run_dir).value_or("");
  auto [secret, credentials] = run_directory::credentials_of(run_dir);
  auto cores = index_list(take_env(child_env::cores).value_or(""));
  auto gpus = index_list(take_env(child_env::gpus).value_or(""));
  // Before this process starts a thread: threads take their creator's cores.
  if (!cores.empty() && !pin_to(cores)) {
    std::cerr << "[lp] cannot pin to cores " << index_text(cores) << "; running unpinned"
              << std::endl;
    cores.clear();
  }
  if (auto chosen = take_env(child_env::transport))
    transport = *chosen == "direct" ? transport_kind::direct : transport_kind::http;
  // Under Slurm, a node's parent is slurmstepd, and the job's end ends it;
  // in a pod, the container's end ends it.
  if (site.launcher_is_parent && launcher != std::to_string(::getppid())) {
    std::cerr << "[lp] the launcher is gone; not starting" << std::endl;
    return 1;
  }
  if (site.own_group && !group_reaper::watch_own_group_for_life())
    std::cerr << "[lp] cannot lead a process group of its own (it is a session leader?); "
                 "what this node starts may outlive it: end it in on_stop "
                 "(docs/launching.md, No orphans)"
              << std::endl;
  // Output goes through a pipe: make each line leave when it is written.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::string> labels;
  for (auto label : split(labels_text, ',')) labels.emplace_back(label);
  std::shared_ptr<const tls_context> tls;
  try {
    if (!credentials.empty())
      tls = std::make_shared<const tls_context>(
          credentials,
          "the run directory's " + std::string(run_directory::certificate_file));
  } catch (const std::exception& e) {
    std::cerr << "[lp] " << labels_text << " could not start: " << e.what() << std::endl;
    return 1;
  }
  auto rendezvous = std::make_shared<rendezvous_directory>(rendezvous_url, secret, tls);
  // A stop signal comes from the launcher, which sends SIGTERM once (and
  // SIGKILL after the termination notice), or from elsewhere: a kill of a
  // whole cgroup or job (systemd, a container runtime, scancel) reaches the
  // nodes as well as the launcher. One from elsewhere is the program's stop,
  // as lp::stop() is, and goes to the launcher, which takes it as no news if
  // it stops already. Only the first signal acts: a later one is the same
  // stop arriving by another way, and a node that does not end is killed
  // after the notice. Under Slurm, slurmstepd delivers the launcher's
  // signals and scancel's alike: all count as from elsewhere.
  enum class stop_signal { none, from_launcher, from_elsewhere };
  auto signalled = std::make_shared<std::atomic<stop_signal>>(stop_signal::none);
  const pid_t launcher_pid = site.launcher_is_parent ? ::getppid() : -1;
  stop_on_signals signals([signalled, launcher_pid](const stop_on_signals::origin& from) {
    *signalled = from.by_process && from.sender == launcher_pid
                     ? stop_signal::from_launcher
                     : stop_signal::from_elsewhere;
    lp::stop();
  });
  try {
    host_options options;
    options.policy = policy;
    options.labels = labels;
    options.nodes = rendezvous;
    options.secret = secret;
    options.tls = tls;
    options.run_dir = run_dir;
    options.bind_host = site.bind_host;
    options.advertise_host = site.advertise_host;
    options.max_body_bytes = flags.server.max_body_mb << 20;
    options.limits = flags.server.limits;
    options.direct_calls = transport == transport_kind::direct;
    options.checkpoint_dir = site.checkpoints_in_run_dir
                                 ? checkpoint_dir_of(flags.checkpoints, run_dir)
                                 : flags.checkpoints.dir;
    options.watch_health = true;
    options.tune_malloc = !flags.process.system_malloc;
    options.cores = cores;
    options.gpus = gpus;
    options.resume_dir = flags.checkpoints.resume;
    options.python = flags.process.python;
    options.termination_notice =
        std::chrono::seconds(flags.process.termination_notice_secs);
    options.run_finished = [rendezvous](const std::string& label) {
      rendezvous->tell("finished", label);
    };
    options.wait_runs_elsewhere = [rendezvous](const std::vector<std::string>& names,
                                               const launch_state& here) {
      return rendezvous->wait_for_runs(names, here);
    };
    node_host host(graph, std::move(options));
    // A stop asked here is passed to the launcher, which stops every other
    // process. A failure is not: the launcher sees this process exit non-zero
    // and decides, by the group's restart policy, what happens next. Nor is a
    // stop this process only followed (a peer refused a call for stopping):
    // the launcher stops already, and its log should not say this node asked.
    host.state().on_stop([&host, rendezvous, signalled, label = labels.front()] {
      if (*signalled != stop_signal::from_launcher && !host.state().failure() &&
          !host.state().stop_followed())
        rendezvous->tell("stop", label);
    });
    // A signal that came while the nodes were being built found no program
    // to stop; it is not lost.
    if (*signalled != stop_signal::none) host.state().request_stop();
    host.state().wait_for_stop();
    host.shutdown();
    auto failure = host.state().failure_summary();
    if (site.report_end)
      rendezvous->tell("ended", labels.front(), {{"failure", failure}});
    return host.state().report_failure(std::cerr);
  } catch (const python_start_error& e) {
    // Its own lines said why; a restart would say it again.
    std::cerr << "[lp] " << e.what() << std::endl;
    if (site.report_end && !labels.empty())
      rendezvous->tell("ended", labels.front(),
                       {{"failure", e.what()}, {"unrecoverable", true}});
    return unrecoverable_exit_status;
  } catch (const std::exception& e) {
    std::cerr << "[lp] " << labels_text << " could not start: " << e.what() << std::endl;
    if (site.report_end && !labels.empty())
      rendezvous->tell("ended", labels.front(),
                       {{"failure", labels_text + " could not start: " + e.what()}});
    return 1;
  }
}

LP_API process_options process_options_from(const launch_flags& flags,
                                            std::string_view policy,
                                            transport_kind transport) {
  // options.tls stays empty: local_mp decides it below, and a Slurm job's
  // supervisor adopts the credentials its submitter made.
  process_options options;
  options.direct_calls = transport == transport_kind::direct;
  options.policy = policy;
  options.arguments = flags.arguments;
  options.process = flags.process;
  options.status_port = flags.status.port;
  return options;
}

// local_mp from a command line: this process is the launcher.
inline int launcher<local_multi_processing>::run(const program& graph,
                                                 transport_kind transport,
                                                 const launch_flags& flags,
                                                 const no_options&) {
  if (flags.process.insecure)
    std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
              << std::endl;
  try {
    auto options = process_options_from(flags, local_multi_processing::flag, transport);
    options.place = true;
    options.gpus =
        flags.process.gpus.empty() ? gpus_found() : index_list(flags.process.gpus);
    options.tls = launch_tls(flags.tls, graph.name(), beyond_loopback(options.bind_host));
    process_launch launch(graph, std::move(options));
    announce_checkpoints(graph, checkpoint_dir_of(flags.checkpoints, launch.run_dir()),
                         std::cerr);
    bool clean = launch.wait_stopping_on_signals();
    if (!clean) std::cerr << launch.summary() << std::flush;
    linger(launch.status_page(), flags.status.linger_secs);
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
