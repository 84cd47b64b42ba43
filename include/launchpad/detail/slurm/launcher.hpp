#pragma once

// The launcher of slurm (detail/named_policies.hpp, `launcher`): the
// submitter, the job's supervisor, and each job step's node process, which
// serves on --lp_slurm_host and leads a process group of its own (nothing
// else ends what it starts). Declared here, for the table of launchers
// (detail/launchers.hpp); its run and run_node are slurm/launch.hpp's.

#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/slurm.hpp>

namespace lp {
class program;
}

namespace lp::detail {

template <>
struct launcher<slurm> {
  static constexpr bool dry_run = true;
  static constexpr bool on_this_host = false;
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings);
  static int run_node(const program& graph, transport_kind transport,
                      const launch_settings& settings);
};

}  // namespace lp::detail
