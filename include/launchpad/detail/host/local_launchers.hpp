#pragma once

// The launchers of test_mt and local_mt (detail/cli/flags.hpp, `launcher`):
// every node a thread of this process. Declared here, for the table of
// launchers (detail/launchers.hpp); their runs are in_process.hpp's.

#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/test_multi_threading.hpp>

namespace lp {
class program;
}

namespace lp::detail {

// What a launcher without flags of its own has.
struct launcher_without_options {
  using options = no_options;
  static constexpr flag_table<no_options> flag_rows{};
  static constexpr bool dry_run = false;  // nothing to show that it would submit
};

// test_mt: the nodes share this process with the caller's, which keeps its
// terminal and signals.
template <>
struct launcher<test_multi_threading> : launcher_without_options {
  static int run(const program& graph, transport_kind transport,
                 const launch_flags& flags, const no_options&);
};

// local_mt: takes over the terminal and the signals, and serves the status
// page.
template <>
struct launcher<local_multi_threading> : launcher_without_options {
  static int run(const program& graph, transport_kind transport,
                 const launch_flags& flags, const no_options&);
};

}  // namespace lp::detail
