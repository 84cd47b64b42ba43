#pragma once

/// @file
/// lp::slurm, the policy that runs a program as one Slurm job.

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

/// The program as one Slurm job, on the cluster's hosts (docs/slurm.md).
///
/// ```cpp
/// return lp::launch<lp::slurm>(p, argc, argv);  // or --lp_launch=slurm
/// ```
///
/// The command you run submits it with sbatch and follows it; in the job,
/// the same binary runs as the supervisor, which starts every node (or
/// colocated group) as its own job step with srun, with the resources of
/// its group (lp::node_group::resources), and does what local_mp's launcher
/// does: rendezvous, restarts, ordered stop, failure summary. The
/// `--lp_slurm_` flags choose the partition, time limit and the rest.
struct slurm {
  /// Its name on the command line: `--lp_launch=slurm`.
  static constexpr std::string_view flag = "slurm";
  /// True: a program's main() runs it, with lp::launch(p, argc, argv).
  static constexpr bool from_command_line = true;
  /// Calls between nodes of one process go over HTTP too.
  using transport = http_transport;
};

}  // namespace lp
