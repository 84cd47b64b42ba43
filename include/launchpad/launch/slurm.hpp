#pragma once

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

// The program as one Slurm job (docs/slurm.md). The command you run submits
// it with sbatch and follows it; in the job, the same binary runs as the
// supervisor, which starts every node (or colocated group) as its own job
// step with srun, with the resources of its group, and does what local_mp's
// launcher does: rendezvous, restarts, ordered stop, failure summary.
struct slurm {
  static constexpr std::string_view flag = "slurm";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
};

}  // namespace lp
