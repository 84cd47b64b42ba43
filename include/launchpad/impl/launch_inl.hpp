#pragma once

// launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled). lp::launch's main path, which --lp_launch sends to a launcher.

#include <launchpad/launch.hpp>

#include <cstdlib>
#include <iostream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/cli/graph_picture.hpp>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/host/in_process.hpp>
#include <launchpad/detail/kube/launch.hpp>
#include <launchpad/detail/launchers.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/process/local_launch.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/slurm/launch.hpp>
#include <launchpad/detail/status/status_command.hpp>
#include <launchpad/detail/util/malloc_tuning.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/program.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

LP_API int launch_main(const program& graph, int argc, char** argv, std::size_t policy,
                       transport_kind transport) {
  try {
    const auto settings = read_command_line({argv, argv + argc});
    if (settings.help) {
      std::cout << flags_help();
      return 0;
    }
    if (!settings.graph.empty()) {
      std::cout << graph_picture(graph, settings.graph);
      return 0;
    }
    if (!settings.status.of.empty())
      return print_status(settings.status.of, settings.status.json, std::cout);
    // Started by a multi-processing launcher: whatever the policy, be a node,
    // where the launcher that started it says (LP_POLICY).
    if (is_node_process()) {
      const char* started_by = std::getenv(child_env::policy);
      auto kind = started_by ? policy_named(started_by) : std::nullopt;
      const auto* starter = kind ? launch_policies::find(*kind) : nullptr;
      if (starter && starter->node) return starter->node(graph, transport, settings);
      return run_node_process(graph, transport, settings);
    }
    // --lp_launch names one of the table's policies (its row checks).
    const auto& chosen = settings.launch ? *launch_policies::find(*settings.launch)
                                         : launch_policies::at(policy);
    if (settings.dry_run && !chosen.dry_run)
      throw usage_error(
          "--lp_dry_run shows what --lp_launch=slurm or --lp_launch=kubernetes would "
          "submit; add one of them");
    if (!settings.checkpoints.resume.empty())
      check_resume_dir(graph, settings.checkpoints.resume);
    return chosen.run(graph, transport, settings);
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp::detail

namespace lp {

// A test's launch of test_mp (detail/process/local_launch.hpp runs it).
LP_API controller::controller(const program& graph, const process_test_options& options,
                              transport_kind transport)
    : graph_(&graph) {
  if (options.executable.empty())
    throw usage_error(
        "test_multi_processing needs process_test_options::executable: a program whose "
        "main() "
        "builds the same graph and calls lp::launch");
  // The nodes' command line, read here as each node process would read it:
  // a flag they would refuse fails here.
  std::vector<std::string> command{options.executable};
  command.insert(command.end(), options.arguments.begin(), options.arguments.end());
  auto nodes = detail::read_command_line(std::move(command));
  // The test calls the nodes: their large results land in this process.
  if (!options.system_malloc) detail::keep_large_blocks();
  if (options.max_body_mb != process_test_options{}.max_body_mb)
    nodes.server.max_body_mb = options.max_body_mb;
  detail::process_options settings;
  settings.policy = detail::policy_kind::test_mp;
  settings.executable = options.executable;
  settings.arguments.push_back(options.executable);
  for (auto& word : detail::child_arguments(nodes))
    settings.arguments.push_back(std::move(word));
  settings.process.termination_notice_secs =
      static_cast<int>(options.termination_notice.count());
  settings.process.terminal = options.terminal;
  settings.process.insecure = options.insecure;
  settings.process.python = nodes.process.python;
  // Their TLS is the launch's: this process is their launcher, and makes the
  // credentials.
  settings.tls = detail::launch_tls(nodes.tls, graph.name(), false);
  settings.stop_when_runs_finish = false;
  settings.direct_calls = transport == transport_kind::direct;
  launch_ = std::make_unique<detail::processes_launch>(graph, std::move(settings));
}

}  // namespace lp
