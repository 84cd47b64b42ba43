#pragma once

// launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled). lp::launch's main path, which --lp_launch sends to a launcher.

#include <launchpad/launch.hpp>

#include <cstdlib>
#include <iostream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/detail/cli/graph_picture.hpp>
#include <launchpad/detail/host/in_process.hpp>
#include <launchpad/detail/kube/launch.hpp>
#include <launchpad/detail/launchers.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/slurm/launch.hpp>
#include <launchpad/detail/status/status_command.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

LP_API int launch_main(const program& graph, int argc, char** argv,
                       std::string_view policy, transport_kind transport) {
  try {
    command_line line;
    read_command_line(argc, argv, line);
    const auto& flags = line.flags;
    if (flags.help) {
      std::cout << flags_help;
      return 0;
    }
    if (!flags.graph.empty()) {
      std::cout << graph_picture(graph, flags.graph);
      return 0;
    }
    if (!flags.status.of.empty())
      return print_status(flags.status.of, flags.status.json, std::cout);
    // Started by a multi-processing launcher: whatever the policy, be a node,
    // where the launcher that started it says (LP_POLICY).
    if (is_node_process()) {
      const char* started_by = std::getenv(child_env::policy);
      const auto* starter = started_by ? launch_policies::find(started_by) : nullptr;
      if (starter && starter->node)
        return starter->node(graph, transport, flags, line.options);
      return run_node_process(graph, transport, flags);
    }
    std::string chosen = flags.launch.value_or(std::string(policy));
    const auto* found = launch_policies::find(chosen);
    if (flags.dry_run && !(found && found->dry_run))
      throw usage_error(
          "--lp_dry_run shows what --lp_launch=slurm or --lp_launch=kubernetes would "
          "submit; add one of them");
    if (!found)
      throw usage_error("--lp_launch=" + chosen + " is not a launch policy; choose " +
                        launch_policies::names());
    if (!flags.checkpoints.resume.empty())
      check_resume_dir(graph, flags.checkpoints.resume);
    return found->run(graph, transport, flags, line.options);
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp::detail
