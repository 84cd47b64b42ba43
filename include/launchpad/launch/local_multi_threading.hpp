#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <launchpad/error.hpp>
#include <exception>
#include <functional>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/run/node_host.hpp>
#include <launchpad/detail/run/run_directory.hpp>
#include <launchpad/detail/run/signals.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>
#include <thread>

namespace lp {

namespace detail {

// Runs the program to its end in this process; returns the exit status.
inline int run_in_process(const program& graph, std::string_view policy, bool handle_signals,
                          const launch_flags& flags) {
  std::unique_ptr<stop_on_signals> signals;
  if (handle_signals)
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
  if (flags.insecure)
    std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
              << std::endl;
  try {
    run_directory run_dir(graph.name(), flags.insecure ? "" : make_secret());
    run_dir.announce(std::cerr);
    host_options options;
    options.policy = policy;
    options.secret = run_dir.secret();
    options.run_dir = run_dir.path();
    options.max_body_bytes = flags.max_body_mb << 20;
    options.direct_calls = flags.direct_calls;
    node_host launch(graph, std::move(options));
    launch.state().wait_for_stop();
    launch.shutdown();
    return launch.state().report_failure(std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace detail

// Every node a thread of one process, each serving on its own loopback HTTP
// port. Ctrl+C (SIGINT) or SIGTERM stops the program gracefully; a second
// one exits at once.
struct local_multi_threading {
  static constexpr std::string_view flag = "local_mt";
  static int run(const program& graph, const detail::launch_flags& flags) {
    return detail::run_in_process(graph, flag, /*handle_signals=*/true, flags);
  }
};

}  // namespace lp
