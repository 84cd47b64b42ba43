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
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/slurm/launch.hpp>
#include <launchpad/detail/status/status_command.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

LP_API int launch_main(const program& graph, int argc, char** argv, std::size_t policy,
                       transport_kind transport) {
  try {
    const auto line = read_command_line(argc, argv);
    const auto& flags = line.flags;
    if (flags.help) {
      std::cout << launch_policies::help();
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
    const auto* found = flags.launch ? launch_policies::find(*flags.launch)
                                     : &launch_policies::at(policy);
    if (flags.dry_run && !(found && found->dry_run))
      throw usage_error(
          "--lp_dry_run shows what --lp_launch=slurm or --lp_launch=kubernetes would "
          "submit; add one of them");
    if (!found)
      throw usage_error("--lp_launch=" + *flags.launch +
                        " is not a launch policy; choose " + launch_policies::names());
    if (!flags.checkpoints.resume.empty())
      check_resume_dir(graph, flags.checkpoints.resume);
    return found->run(graph, transport, flags, line.options);
  } catch (const usage_error& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  }
}

}  // namespace lp::detail

namespace lp {

// A test's launch of test_mp (detail/process/node_process.hpp runs it):
// here, beside the table of every launcher's flags that its node processes
// read.
LP_API controller::controller(const program& graph, const process_test_options& options,
                              transport_kind transport)
    : graph_(&graph) {
  if (options.executable.empty())
    throw usage_error(
        "test_multi_processing needs process_test_options::executable: a program whose "
        "main() "
        "builds the same graph and calls lp::launch");
  detail::process_options settings;
  settings.policy = test_multi_processing::flag;
  settings.executable = options.executable;
  settings.arguments.push_back(options.executable);
  for (const auto& argument : options.arguments) settings.arguments.push_back(argument);
  if (options.max_body_mb != process_test_options{}.max_body_mb)
    settings.arguments.push_back("--lp_max_body_mb=" +
                                 std::to_string(options.max_body_mb));
  settings.process.termination_notice_secs =
      static_cast<int>(options.termination_notice.count());
  settings.process.terminal = options.terminal;
  settings.process.insecure = options.insecure;
  // The nodes' command line, read here as each node process reads it: a
  // flag it would refuse fails here. Their --lp_tls flags are the launch's:
  // this process is their launcher, and makes the credentials.
  {
    std::vector<char*> words;
    for (auto& word : settings.arguments) words.push_back(word.data());
    auto line = detail::read_command_line(static_cast<int>(words.size()), words.data());
    settings.tls = detail::launch_tls(line.flags.tls, graph.name(), false);
    settings.process.python = line.flags.process.python;
  }
  settings.stop_when_runs_finish = false;
  settings.direct_calls = transport == transport_kind::direct;
  launch_ = std::make_unique<detail::processes_launch>(graph, std::move(settings));
}

}  // namespace lp
