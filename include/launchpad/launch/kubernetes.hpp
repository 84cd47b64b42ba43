#pragma once

/// @file
/// lp::kubernetes, the policy that runs a program as Kubernetes Jobs.

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

/// The program on Kubernetes, one pod per process (docs/kubernetes.md).
///
/// ```cpp
/// return lp::launch<lp::kubernetes>(p, argc, argv);  // or --lp_launch=kubernetes
/// ```
///
/// On a workstation, the command writes the launch's manifests: one Indexed
/// Job per process group, a coordinator Job, a headless Service that gives
/// each pod a DNS name, and a Secret with the launch's secret and TLS
/// credentials. In the pods, the same binary is the coordinator
/// (rendezvous, status page, the program's end) or the process its Job's
/// index names.
struct kubernetes {
  /// Its name on the command line: `--lp_launch=kubernetes`.
  static constexpr std::string_view flag = "kubernetes";
  /// True: a program's main() runs it, with lp::launch(p, argc, argv).
  static constexpr bool from_command_line = true;
  /// Calls between nodes of one process go over HTTP too.
  using transport = http_transport;
};

}  // namespace lp
