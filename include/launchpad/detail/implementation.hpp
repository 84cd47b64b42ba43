#pragma once

// The library's compiled part: every definition that lp::launch and the test
// controllers declare. Included by launch.hpp where detail/config.hpp says
// the compiled part is defined; compiled once by the meson dependency.

#include <iostream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/graph/graph_picture.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/run/in_process.hpp>
#include <launchpad/detail/run/status_command.hpp>
#include <launchpad/detail/slurm/launch.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

LP_API int launch_main(const program& graph, int argc, char** argv, std::string_view policy,
                       transport_kind transport) {
  try {
    auto flags = parse_flags(argc, argv);
    if (flags.help) {
      std::cout << flags_help;
      return 0;
    }
    if (!flags.graph.empty()) {
      std::cout << graph_picture(graph, flags.graph);
      return 0;
    }
    if (!flags.status_of.empty())
      return print_status(flags.status_of, flags.json, std::cout);
    // Started by a multi-processing launcher: whatever the policy, be a node.
    if (is_node_process()) return run_node_process(graph, transport, flags);
    std::string chosen = flags.launch.value_or(std::string(policy));
    if (flags.dry_run && chosen != slurm::flag)
      throw usage_error("--lp_dry_run shows what --lp_launch=slurm would submit; add that flag");
    if (chosen == test_multi_threading::flag)
      return run_in_process(graph, chosen, /*handle_signals=*/false, transport, flags);
    if (chosen == local_multi_threading::flag)
      return run_in_process(graph, chosen, /*handle_signals=*/true, transport, flags);
    if (chosen == local_multi_processing::flag)
      return run_local_multi_processing(graph, transport, flags);
    if (chosen == slurm::flag) return run_slurm(graph, transport, flags);
    throw usage_error("--lp_launch=" + chosen +
                      " is not a launch policy; choose test_mt, local_mt, local_mp or slurm");
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp::detail
