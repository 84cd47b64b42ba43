#pragma once

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

// The program on Kubernetes (docs/kubernetes.md). On a workstation, the
// command writes the launch's manifests: one Indexed Job per process group,
// a coordinator Job, a headless Service that gives each pod a DNS name, and
// a Secret with the launch's secret and TLS credentials. In the pods, the
// same binary is the coordinator (rendezvous, status page, the program's
// end) or the process its Job's index names.
struct kubernetes {
  static constexpr std::string_view flag = "kubernetes";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
};

}  // namespace lp
