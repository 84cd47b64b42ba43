#pragma once

// The launcher of kubernetes (detail/named_policies.hpp, `launcher`): on a
// workstation, the manifests; in a pod, its coordinator or its node
// process. Declared here, for the table of launchers
// (detail/launchers.hpp); its run is kube/launch.hpp's.

#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/policy.hpp>

namespace lp {
class program;
}

namespace lp::detail {

template <>
struct launcher<kubernetes> {
  static constexpr bool dry_run = true;
  static constexpr bool on_this_host = false;
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings);
};

}  // namespace lp::detail
