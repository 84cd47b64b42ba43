#pragma once

/// @file
/// lp::local_multi_threading, the policy that runs a program as threads of
/// one process.

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

/// Every node a thread of one process, each serving on its own loopback
/// HTTP port: for development, debugging in one process, small programs.
///
/// ```cpp
/// return lp::launch<lp::local_multi_threading>(p, argc, argv);  // or --lp_launch=local_mt
/// ```
///
/// Ctrl+C (SIGINT) or SIGTERM stops the program gracefully; a second one
/// exits at once. The default policy of lp::launch (docs/launching.md,
/// "local_multi_threading").
struct local_multi_threading {
  /// Its name on the command line: `--lp_launch=local_mt`.
  static constexpr std::string_view flag = "local_mt";
  /// True: a program's main() runs it, with lp::launch(p, argc, argv).
  static constexpr bool from_command_line = true;
  /// Calls between nodes of one process go over HTTP too.
  using transport = http_transport;
};

}  // namespace lp
