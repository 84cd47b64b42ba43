#pragma once

// The launchers of test_mt and local_mt (detail/named_policies.hpp,
// `launcher`): every node a thread of this process. Declared here, for the
// table of launchers (detail/launchers.hpp); their runs, and
// run_on_this_host, which local_mp's launcher shares, are in_process.hpp's.

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/test_multi_threading.hpp>

namespace lp {
class program;
}

namespace lp::detail {

// What the launchers of a launch on this host have: checkpoints kept where
// run_on_this_host (in_process.hpp) says, which the table of launchers runs
// them through.
struct launcher_on_this_host {
  static constexpr bool dry_run = false;  // nothing to show that it would submit
  static constexpr bool on_this_host = true;
};

// Runs `run` with the checkpoints in a directory of the launch's own,
// unless the user chose one, and tells at the end how to go on from them.
LP_API int run_on_this_host(const program& graph, transport_kind transport,
                            launch_settings settings,
                            int (*run)(const program&, transport_kind,
                                       const launch_settings&));

// test_mt: the nodes share this process with the caller's, which keeps its
// terminal and signals.
template <>
struct launcher<test_multi_threading> : launcher_on_this_host {
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings);
};

// local_mt: takes over the terminal and the signals, and serves the status
// page.
template <>
struct launcher<local_multi_threading> : launcher_on_this_host {
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings);
};

}  // namespace lp::detail
