#pragma once

// node_process.hpp's share of the library's compiled part: the definitions
// that detail/implementation.hpp gathers (detail/config.hpp says where they
// are compiled).

#include <launchpad/detail/process/node_process.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/placement.hpp>
#include <launchpad/detail/util/text.hpp>
#include <memory>
#include <string>
#include <vector>

namespace lp::detail {

LP_API std::optional<std::string> take_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  std::string copy = value;
  ::unsetenv(name);
  return copy;
}

LP_API bool is_node_process() {
  return std::getenv(child_env::nodes) != nullptr;
}

LP_API int run_node_process(const program& graph, transport_kind transport,
                            const launch_settings& settings,
                            const std::optional<node_site>& chosen_site) {
  auto labels_text = take_env(child_env::nodes).value_or("");
  auto rendezvous_url = take_env(child_env::rendezvous).value_or("");
  auto launcher = take_env(child_env::launcher).value_or("");
  auto policy = policy_named(take_env(child_env::policy).value_or(""))
                    .value_or(policy_kind::local_mp);
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
    // The processes of these launches share the launcher's host; a Slurm
    // job's steps share a run directory on the file system of its hosts,
    // where each host's steps make their sockets, and a caller takes a
    // node's only from the same host and network namespace (its published
    // host identity): steps on other hosts call over TCP. A pod's nodes
    // (its colocated ones, and its Python nodes' processes) make theirs on
    // the pod's emptyDir; other pods are in other network namespaces.
    if (policy == policy_kind::local_mp || policy == policy_kind::test_mp ||
        policy == policy_kind::slurm)
      options.socket_dir = same_host_dir(settings, run_dir);
    else if (policy == policy_kind::kubernetes && !site.sockets_root.empty())
      options.socket_dir = same_host_dir(settings, site.sockets_root);
    options.bind_host = site.bind_host;
    options.advertise_host = site.advertise_host;
    options.max_body_bytes = settings.server.max_body_mb << 20;
    options.limits = settings.server.limits;
    options.direct_calls = transport == transport_kind::direct;
    options.checkpoint_dir = site.checkpoints_in_run_dir
                                 ? checkpoint_dir_of(settings.checkpoints, run_dir)
                                 : settings.checkpoints.dir;
    options.watch_health = true;
    options.tune_malloc = !settings.process.system_malloc;
    options.shared_memory_bytes = settings.same_host.shared_memory_mb << 20;
    options.cores = cores;
    options.gpus = gpus;
    options.resume_dir = settings.checkpoints.resume;
    options.python = settings.process.python;
    options.termination_notice =
        std::chrono::seconds(settings.process.termination_notice_secs);
    options.run_finished = [rendezvous](const std::string& label) {
      rendezvous->tell(protocol::path::rendezvous_finished, label);
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
        rendezvous->tell(protocol::path::rendezvous_stop, label);
    });
    // A signal that came while the nodes were being built found no program
    // to stop; it is not lost.
    if (*signalled != stop_signal::none) host.state().request_stop();
    host.state().wait_for_stop();
    host.shutdown();
    auto failure = host.state().failure_summary();
    if (site.report_end)
      rendezvous->tell(protocol::path::rendezvous_ended, labels.front(),
                       {{"failure", failure}});
    return host.state().report_failure(std::cerr);
  } catch (const stopping& e) {
    // The program stopped while this process started (a peer its node's
    // constructor called, or the launcher, said so): it ends as the stop
    // ends the others, not as a failure.
    std::cerr << "[lp] " << labels_text << " stopped before it served: " << e.what()
              << std::endl;
    if (site.report_end && !labels.empty())
      rendezvous->tell(protocol::path::rendezvous_ended, labels.front(),
                       {{"failure", ""}});
    return 0;
  } catch (const python_start_error& e) {
    // Its own lines said why; a restart would say it again.
    std::cerr << "[lp] " << e.what() << std::endl;
    if (site.report_end && !labels.empty())
      rendezvous->tell(protocol::path::rendezvous_ended, labels.front(),
                       {{"failure", e.what()}, {"unrecoverable", true}});
    return unrecoverable_exit_status;
  } catch (const std::exception& e) {
    std::cerr << "[lp] " << labels_text << " could not start: " << e.what() << std::endl;
    if (site.report_end && !labels.empty())
      rendezvous->tell(protocol::path::rendezvous_ended, labels.front(),
                       {{"failure", labels_text + " could not start: " + e.what()}});
    return 1;
  }
}

}  // namespace lp::detail
