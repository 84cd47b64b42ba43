#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/run/node_host.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/rendezvous.hpp>
#include <launchpad/detail/run/signals.hpp>
#include <launchpad/detail/process/host_address.hpp>
#include <launchpad/program.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

namespace detail {

inline std::optional<std::string> take_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  std::string copy = value;
  // The node's own child processes must not take themselves for nodes,
  // nor see the secret.
  ::unsetenv(name);
  return copy;
}

// True in a process that a multi-processing launcher started as a node.
inline bool is_node_process() { return std::getenv(child_env::nodes) != nullptr; }

// The life of a node process: host its nodes, publish them, stop when the
// launcher says so (SIGTERM) or when one of them calls lp::stop(), which
// the launcher then passes on to every other process.
inline int run_node_process(const program& graph, const launch_flags& flags) {
  auto labels_text = take_env(child_env::nodes).value_or("");
  auto rendezvous_url = take_env(child_env::rendezvous).value_or("");
  auto secret = take_env(child_env::secret).value_or("");
  auto launcher = take_env(child_env::launcher).value_or("");
  auto policy = take_env(child_env::policy).value_or("local_mp");
  auto run_dir = take_env(child_env::run_dir).value_or("");
  // Under Slurm, a node's parent is slurmstepd, and the job's end ends it.
  if (policy != slurm_policy && launcher != std::to_string(::getppid())) {
    std::cerr << "[lp] the launcher is gone; not starting" << std::endl;
    return 1;
  }
  // Output goes through a pipe: make each line leave when it is written.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::string> labels;
  for (std::size_t start = 0; start <= labels_text.size();) {
    auto comma = labels_text.find(',', start);
    if (comma == std::string::npos) comma = labels_text.size();
    labels.push_back(labels_text.substr(start, comma - start));
    start = comma + 1;
  }
  auto rendezvous = std::make_shared<rendezvous_directory>(rendezvous_url, secret);
  auto told_by_launcher = std::make_shared<std::atomic<bool>>(false);
  stop_on_signals signals(
      [told_by_launcher](int) {
        *told_by_launcher = true;
        lp::stop();
      },
      [](int signal) { std::_Exit(128 + signal); });
  try {
    host_options options;
    options.policy = policy;
    options.labels = labels;
    options.nodes = rendezvous;
    options.secret = secret;
    options.run_dir = run_dir;
    if (policy == slurm_policy) options.bind_host = slurm_host_address(flags.slurm_host);
    options.max_body_bytes = flags.max_body_mb << 20;
    options.direct_calls = flags.direct_calls;
    options.run_finished = [rendezvous](const std::string& label) {
      rendezvous->tell("finished", label);
    };
    node_host host(graph, std::move(options));
    // A stop asked here is passed to the launcher, which stops every other
    // process. A failure is not: the launcher sees this process exit non-zero
    // and decides, by the group's restart policy, what happens next.
    host.state().on_stop([&host, rendezvous, told_by_launcher, label = labels.front()] {
      if (!*told_by_launcher && !host.state().failure()) rendezvous->tell("stop", label);
    });
    // A SIGTERM that came while the nodes were being built found no program
    // to stop; it is not lost.
    if (*told_by_launcher) host.state().request_stop();
    host.state().wait_for_stop();
    host.shutdown();
    return host.state().report_failure(std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "[lp] " << labels_text << " could not start: " << e.what() << std::endl;
    return 1;
  }
}

inline process_options process_options_from(const launch_flags& flags, std::string_view policy) {
  process_options options;
  options.policy = policy;
  options.arguments = flags.arguments;
  options.termination_notice = std::chrono::seconds(flags.termination_notice_secs);
  options.terminal = flags.terminal;
  options.log_dir = flags.log_dir;
  options.insecure = flags.insecure;
  return options;
}

}  // namespace detail

// Every node its own process: the launcher starts this same program again
// once per node (or per colocated group), with the same arguments; each
// process builds the same program graph and runs only its own nodes. The
// nodes find each other through the launcher (a rendezvous on loopback), so
// no port is chosen in advance. Ctrl+C or SIGTERM stops every node (each
// gets SIGTERM, and is killed after --lp_termination_notice_secs); a second
// Ctrl+C kills them at once. When the launcher dies, even by SIGKILL, its
// node processes die with it.
struct local_multi_processing {
  static constexpr std::string_view flag = "local_mp";

  static int run(const program& graph, const detail::launch_flags& flags) {
    if (flags.insecure)
      std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
                << std::endl;
    try {
      detail::process_launch launch(graph, detail::process_options_from(flags, flag));
      if (launch.wait_stopping_on_signals()) return 0;
      std::cerr << launch.summary() << std::flush;
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
      return 1;
    }
  }
};

}  // namespace lp
