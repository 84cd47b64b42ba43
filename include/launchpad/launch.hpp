#pragma once

// lp::launch runs a program under a launch policy:
//
//   return lp::launch(p, argc, argv);                        // --lp_launch=... or local_mt
//   return lp::launch<lp::local_multi_threading>(p, argc, argv);
//   auto running = lp::launch<lp::test_multi_threading>(p);  // in a test
//   auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
//   return lp::launch<lp::slurm>(p, argc, argv);              // one Slurm job
//
// The policy named as a template argument is the default; --lp_launch on the
// command line overrides it, so one binary runs every way.

#include <concepts>
#include <iostream>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/graph/graph_picture.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>

namespace lp {

template <class Policy>
  requires std::same_as<Policy, test_multi_threading>
test_controller launch(const program& graph, const std::vector<std::string>& flags = {}) {
  return test_controller(graph, flags);
}

template <class Policy>
  requires std::same_as<Policy, test_multi_processing>
process_controller launch(const program& graph, const process_test_options& options) {
  return process_controller(graph, options);
}

// Returns the program's exit status: 0 when it stopped cleanly, 1 when a node
// failed, 2 for a usage error such as an unknown --lp_ flag.
template <class Policy = local_multi_threading>
int launch(const program& graph, int argc, char** argv) {
  try {
    auto flags = detail::parse_flags(argc, argv);
    if (flags.help) {
      std::cout << detail::flags_help;
      return 0;
    }
    if (!flags.graph.empty()) {
      std::cout << detail::graph_picture(graph, flags.graph);
      return 0;
    }
    // Started by a multi-processing launcher: whatever the policy, be a node.
    if (detail::is_node_process()) return detail::run_node_process(graph, flags);
    std::string policy = flags.launch.value_or(std::string(Policy::flag));
    if (flags.dry_run && policy != slurm::flag)
      throw usage_error("--lp_dry_run shows what --lp_launch=slurm would submit; add that flag");
    if (policy == test_multi_threading::flag) return test_multi_threading::run(graph, flags);
    if (policy == local_multi_threading::flag) return local_multi_threading::run(graph, flags);
    if (policy == local_multi_processing::flag) return local_multi_processing::run(graph, flags);
    if (policy == slurm::flag) return slurm::run(graph, flags);
    throw usage_error("--lp_launch=" + policy +
                      " is not a launch policy; choose test_mt, local_mt, local_mp or slurm");
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp
