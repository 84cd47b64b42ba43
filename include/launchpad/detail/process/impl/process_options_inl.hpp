#pragma once

// process_options.hpp's share of the library's compiled part: the
// definitions that detail/implementation.hpp gathers (detail/config.hpp
// says where they are compiled).

#include <launchpad/detail/process/process_options.hpp>

#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <string>
#include <utility>

namespace lp::detail {

LP_API process_options process_options_from(const launch_settings& settings,
                                            policy_kind policy,
                                            transport_kind transport) {
  process_options options;
  options.direct_calls = transport == transport_kind::direct;
  options.policy = policy;
  options.arguments.push_back(settings.command.empty() ? this_executable()
                                                       : settings.command.front());
  for (auto& word : child_arguments(settings))
    options.arguments.push_back(std::move(word));
  options.process = settings.process;
  options.status_port = settings.status.port;
  return options;
}

}  // namespace lp::detail
