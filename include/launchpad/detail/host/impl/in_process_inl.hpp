#pragma once

// in_process.hpp's share of the library's compiled part: the definitions
// that detail/implementation.hpp gathers (detail/config.hpp says where they
// are compiled).

#include <launchpad/detail/host/in_process.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/node_streams.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace lp {

namespace detail {

LP_API int run_in_process(const program& graph, thread_launch kind,
                          transport_kind transport, const launch_settings& settings) {
  const bool user = kind == thread_launch::user;
  const auto policy = user ? policy_kind::local_mt : policy_kind::test_mt;
  // The nodes share this process's terminal: their std::cout and std::cerr
  // lines are told apart as under local_mp. First and last: no other
  // thread (the signals' one) writes while the streams change hands.
  std::shared_ptr<node_streams> streams;
  if (user) streams = node_streams::take_over(std::string(name_of(policy)));
  std::unique_ptr<stop_on_signals> signals;
  if (user)
    signals = std::make_unique<stop_on_signals>(
        [](int signal) {
          std::cerr << "[lp] " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                    << ": stopping the program (again to exit at once)" << std::endl;
          lp::stop();
        },
        [](int signal) {
          std::cerr << "[lp] second signal: exiting at once" << std::endl;
          std::_Exit(128 + signal);
        });
  if (settings.process.insecure)
    std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
              << std::endl;
  try {
    // Its nodes serve on loopback: TLS only with --lp_tls=on or a site's files.
    run_directory run_dir(graph.name(), settings.process.insecure ? "" : make_secret(),
                          "/tmp", launch_tls(settings.tls, graph.name(), false));
    run_dir.announce(std::cerr);
    std::shared_ptr<const tls_context> tls;
    if (!run_dir.tls().empty()) tls = std::make_shared<const tls_context>(run_dir.tls());
    host_options options;
    options.policy = policy;
    options.secret = run_dir.secret();
    options.tls = tls;
    options.run_dir = run_dir.path();
    // Callers in other processes of this host, and curl, reach its nodes
    // over them.
    options.socket_dir = same_host_dir(settings, run_dir.path());
    options.max_body_bytes = settings.server.max_body_mb << 20;
    options.limits = settings.server.limits;
    options.direct_calls = transport == transport_kind::direct;
    options.checkpoint_dir = checkpoint_dir_of(settings.checkpoints, run_dir.path());
    options.resume_dir = settings.checkpoints.resume;
    options.tune_malloc = !settings.process.system_malloc;
    options.shared_memory_bytes = settings.same_host.shared_memory_mb << 20;
    options.python = settings.process.python;
    options.termination_notice =
        std::chrono::seconds(settings.process.termination_notice_secs);
    announce_checkpoints(graph, options.checkpoint_dir, std::cerr);
    node_host launch(graph, std::move(options));
    std::unique_ptr<status_server> page;
    if (user)
      page = start_status_page(graph, policy, run_dir.secret(), run_dir.path(),
                               settings.status.port, node_states(launch, *streams), tls);
    launch.state().wait_for_stop();
    launch.shutdown();
    int status = launch.state().report_failure(std::cerr);
    // As local_mp's summary does: the failed node's lines, not lost among
    // the others it printed before.
    if (status != 0 && streams)
      std::cerr << quoted_last_lines(streams->last_lines(launch.state().failed_node()))
                << std::flush;
    linger(page.get(), settings.status.linger_secs);
    return status;
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}

// A launch of test_mt, local_mt or local_mp from a command line, which
// `run` starts. Unless the user chose where, the checkpoints go to a
// directory of this launch's own that a user finds again (checkpoint_home),
// and the launch's end says where they are and how to go on from them.
LP_API int run_on_this_host(const program& graph, transport_kind transport,
                            launch_settings settings,
                            int (*run)(const program&, transport_kind,
                                       const launch_settings&)) {
  bool own_dir = settings.checkpoints.dir.empty() && keeps_checkpoints(graph);
  if (own_dir) {
    try {
      // local_mp's node processes get it with the settings.
      settings.checkpoints.dir = make_launch_checkpoint_dir(graph.name());
    } catch (const launch_error& e) {
      std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
      return 1;
    }
  }
  int status = run(graph, transport, settings);
  // The command the user typed, which named no directory of this launch's.
  if (!tell_how_to_resume(graph, settings.checkpoints.dir, settings.command, std::cerr) &&
      own_dir) {
    // Nothing was saved: no empty directory stays, of the launch or of the
    // program, which a later launch makes again.
    ::rmdir(settings.checkpoints.dir.c_str());
    ::rmdir(checkpoint_home(graph.name()).c_str());
  }
  return status;
}

}  // namespace detail

LP_API controller::controller(const program& graph, const test_options& options,
                              transport_kind transport)
    : graph_(&graph) {
  detail::host_options settings;
  settings.policy = detail::policy_kind::test_mt;
  settings.secret = options.insecure ? "" : detail::make_secret();
  settings.max_body_bytes = options.max_body_mb << 20;
  settings.limits.header_timeout = std::chrono::seconds(options.header_timeout_secs);
  settings.limits.min_bytes_per_second = options.min_rate_kib_per_sec << 10;
  settings.limits.max_connections = options.max_connections;
  settings.direct_calls = transport == transport_kind::direct;
  settings.stop_when_runs_finish = false;
  settings.tune_malloc = !options.system_malloc;
  settings.python = options.python;
  if (options.tls)
    settings.tls = std::make_shared<const detail::tls_context>(
        detail::make_launch_credentials(graph.name()));
  launch_ = std::make_unique<detail::threads_launch>(graph, std::move(settings));
}

}  // namespace lp
