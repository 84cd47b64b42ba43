#pragma once

// The launcher of local_mp (detail/named_policies.hpp, `launcher`): every
// node (or colocated group) a process of this host, which runs main() again
// and, told so by its environment, hosts its nodes. Declared here, for the
// table of launchers (detail/launchers.hpp); its run is local_launch.hpp's.

#include <launchpad/detail/host/local_launchers.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/policy.hpp>

namespace lp::detail {

template <>
struct launcher<local_multi_processing> : launcher_on_this_host {
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings);
};

}  // namespace lp::detail
