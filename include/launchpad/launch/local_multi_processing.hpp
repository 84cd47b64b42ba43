#pragma once

/// @file
/// lp::local_multi_processing, the policy that runs each node of a program as
/// a process of its own.

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

/// Every node its own process, on this machine: isolation (one crash kills
/// one node), restarts, per-node logs and tmux.
///
/// ```cpp
/// return lp::launch<lp::local_multi_processing>(p, argc, argv);  // or --lp_launch=local_mp
/// ```
///
/// The launcher starts this same program again once per node (or per
/// colocated group), with the same arguments; each process builds the same
/// program graph and runs only its own nodes. The nodes find each other
/// through the launcher (a rendezvous on loopback), so no port is chosen in
/// advance. Ctrl+C or SIGTERM stops every node (each gets SIGTERM, and is
/// killed after `--lp_termination_notice_secs`); a second Ctrl+C kills them
/// at once. When the launcher dies, even by SIGKILL, its node processes die
/// with it (docs/launching.md, "local_multi_processing").
struct local_multi_processing {
  /// Its name on the command line: `--lp_launch=local_mp`.
  static constexpr std::string_view flag = "local_mp";
  /// True: a program's main() runs it, with lp::launch(p, argc, argv).
  static constexpr bool from_command_line = true;
  /// Calls between nodes of one process go over HTTP too.
  using transport = http_transport;
};

}  // namespace lp
