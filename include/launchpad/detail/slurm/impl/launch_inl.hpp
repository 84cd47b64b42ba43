#pragma once

// launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/slurm/launch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

namespace lp::detail {

LP_API int run_slurm(const program& graph, transport_kind transport,
                     const launch_settings& settings) {
  if (settings.process.insecure)
    std::cerr << "[lp] --lp_insecure: nodes accept calls from anyone who can reach them"
              << std::endl;
  if (const char* run_dir = std::getenv(slurm_run_dir_env)) {
    std::string path = run_dir;
    ::unsetenv(slurm_run_dir_env);  // the nodes are not supervisors
    return run_slurm_supervisor(
        graph, settings, process_options_from(settings, policy_kind::slurm, transport),
        path);
  }
  try {
    graph_access::check_defined(graph);
    if (settings.dry_run) {
      print_dry_run(graph, settings, std::cout);
      return 0;
    }
    return slurm_submission(graph, settings).run();
  } catch (const usage_error&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace lp::detail
