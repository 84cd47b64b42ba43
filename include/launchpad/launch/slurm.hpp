#pragma once

#include <cstdlib>
#include <iostream>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/slurm/submit.hpp>
#include <launchpad/detail/slurm/supervisor.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>

namespace lp {

// The program as one Slurm job (docs/slurm.md). The command you run submits
// it with sbatch and follows it; in the job, the same binary runs as the
// supervisor, which starts every node (or colocated group) as its own job
// step with srun, with the resources of its group, and does what local_mp's
// launcher does: rendezvous, restarts, ordered stop, failure summary.
struct slurm {
  static constexpr std::string_view flag = detail::slurm_policy;

  static int run(const program& graph, const detail::launch_flags& flags) {
    if (flags.insecure)
      std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
                << std::endl;
    if (const char* run_dir = std::getenv(detail::slurm_run_dir_env)) {
      std::string path = run_dir;
      ::unsetenv(detail::slurm_run_dir_env);  // the nodes are not supervisors
      return detail::run_slurm_supervisor(graph, flags,
                                          detail::process_options_from(flags, flag), path);
    }
    try {
      if (flags.dry_run) {
        detail::print_dry_run(graph, flags, std::cout);
        return 0;
      }
      return detail::slurm_submission(graph, flags).run();
    } catch (const usage_error&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
      return 1;
    }
  }
};

}  // namespace lp
