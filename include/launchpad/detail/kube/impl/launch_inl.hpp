#pragma once

// launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/kube/launch.hpp>

#include <iostream>
#include <string>

namespace lp::detail {

LP_API int run_kubernetes(const program& graph, transport_kind transport,
                          const launch_settings& settings) {
  auto role = take_env(kube::pod_env::role);
  if (!role) return run_kube_manifests(graph, settings);
  if (*role == kube::coordinator_role) return kube::run_coordinator(graph, settings);
  if (*role == kube::node_role) return kube::run_pod_node(graph, transport, settings);
  std::cerr
      << "[lp] " << kube::pod_env::role << "='" << *role
      << "' is neither coordinator nor node: this pod was not made from the manifests "
         "that --lp_launch=kubernetes writes"
      << std::endl;
  return 1;
}

}  // namespace lp::detail
