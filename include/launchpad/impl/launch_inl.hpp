#pragma once

// launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled). lp::launch's main path, which --lp_launch sends to a launcher.

#include <launchpad/launch.hpp>

#include <unistd.h>

#include <iostream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/detail/cli/graph_picture.hpp>
#include <launchpad/detail/host/in_process.hpp>
#include <launchpad/detail/kube/launch.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/slurm/launch.hpp>
#include <launchpad/detail/slurm/tools.hpp>
#include <launchpad/detail/status/status_command.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// test_mt, local_mt or local_mp from a command line. Unless the user chose
// where, the checkpoints go to a directory of this launch's own that a user
// finds again (checkpoint_home), and the launch's end says where they are
// and how to go on from them.
inline int run_on_this_host(const program& graph, const std::string& policy,
                            transport_kind transport, launch_flags flags) {
  auto command = flags.arguments;
  bool own_dir = flags.checkpoint_dir.empty() && keeps_checkpoints(graph);
  if (own_dir) {
    try {
      flags.checkpoint_dir = make_launch_checkpoint_dir(graph.name());
    } catch (const launch_error& e) {
      std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
      return 1;
    }
    // local_mp's node processes take their flags from this command line.
    flags.arguments.insert(flags.arguments.begin() + (flags.arguments.empty() ? 0 : 1),
                           "--lp_checkpoint_dir=" + flags.checkpoint_dir);
  }
  int status = policy == local_multi_processing::flag
                   ? run_local_multi_processing(graph, transport, flags)
                   : run_in_process(graph, policy, policy == local_multi_threading::flag,
                                    transport, flags);
  if (!tell_how_to_resume(graph, flags.checkpoint_dir, command, std::cerr) && own_dir) {
    // Nothing was saved: no empty directory stays, of the launch or of the
    // program, which a later launch makes again.
    ::rmdir(flags.checkpoint_dir.c_str());
    ::rmdir(checkpoint_home(graph.name()).c_str());
  }
  return status;
}

LP_API int launch_main(const program& graph, int argc, char** argv,
                       std::string_view policy, transport_kind transport) {
  try {
    auto flags = parse_flags(argc, argv);
    check_tls_flags(flags);
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
    bool cluster = chosen == slurm::flag || chosen == kubernetes::flag;
    if (flags.dry_run && !cluster)
      throw usage_error(
          "--lp_dry_run shows what --lp_launch=slurm or --lp_launch=kubernetes would "
          "submit; add one of them");
    bool local = chosen == test_multi_threading::flag ||
                 chosen == local_multi_threading::flag ||
                 chosen == local_multi_processing::flag;
    if (!local && !cluster)
      throw usage_error(
          "--lp_launch=" + chosen +
          " is not a launch policy; choose test_mt, local_mt, local_mp, slurm "
          "or kubernetes");
    if (!flags.resume.empty()) check_resume_dir(graph, flags.resume);
    if (chosen == kubernetes::flag) return run_kubernetes(graph, transport, flags);
    if (!local) return run_slurm(graph, transport, flags);
    return run_on_this_host(graph, chosen, transport, std::move(flags));
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp::detail
