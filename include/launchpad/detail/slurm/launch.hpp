#pragma once

// --lp_launch=slurm: submit the program as one job, or, inside the job, be
// its supervisor (docs/slurm.md).

#include <cstdlib>
#include <iostream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/process/host_address.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/process/process_options.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/slurm/launcher.hpp>
#include <launchpad/detail/slurm/submit.hpp>
#include <launchpad/detail/slurm/supervisor.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/program.hpp>
#include <string>

namespace lp::detail {

// Submits the program as one Slurm job and follows it, or, inside the job,
// supervises it (its batch script says so).
LP_API int run_slurm(const program& graph, transport_kind transport,
                     const launch_settings& settings);

inline int launcher<slurm>::run(const program& graph, transport_kind transport,
                                const launch_settings& settings) {
  return run_slurm(graph, transport, settings);
}

// A job step's node process: its parent is slurmstepd, it serves on
// --lp_slurm_host, and it leads a process group of its own.
inline int launcher<slurm>::run_node(const program& graph, transport_kind transport,
                                     const launch_settings& settings) {
  node_site site;
  site.launcher_is_parent = false;
  site.bind_host = slurm_host_address(settings.slurm.host);
  site.own_group = true;
  return run_node_process(graph, transport, settings, site);
}

}  // namespace lp::detail
