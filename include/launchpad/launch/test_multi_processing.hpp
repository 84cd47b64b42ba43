#pragma once

/// @file
/// lp::test_multi_processing, the policy for tests that runs each node of a
/// program as a process, and its lp::process_test_options.

#include <chrono>
#include <cstddef>
#include <launchpad/launch/controller.hpp>
#include <launchpad/launch/policy.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

/// What a test may choose about a program it launches as processes, as
/// `lp::launch<lp::test_multi_processing>(p, options)` takes it.
struct process_test_options {
  /// The nodes' program (required): one whose main() builds the same graph
  /// and calls lp::launch.
  std::string executable;
  /// Its arguments after argv[0], including any `--lp_` flags the nodes
  /// should see; the controller reads the TLS flags among them as the
  /// launcher would.
  std::vector<std::string> arguments;
  /// How long a node has to stop after SIGTERM before it is killed.
  std::chrono::seconds termination_notice{10};
  terminal_kind terminal = terminal_kind::current;  ///< where the nodes' output goes
  bool insecure = false;          ///< nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;  ///< the largest request body a node accepts
  /// As `--lp_system_malloc` for the test's own process: leave its glibc
  /// malloc as it is. By default it keeps large blocks as a node's process
  /// does (docs/concepts.md, "Big values"), since it calls the nodes and
  /// reads their large results; the nodes follow `arguments`.
  bool system_malloc = false;
};

/// For tests of a program as processes, like lp::local_multi_processing.
///
/// ```cpp
/// auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
/// CHECK(running.wait({"producers"}));
/// CHECK(running.client(counter).get() == 4000);
/// ```
///
/// The test process is the launcher; each node runs in a process of
/// `executable`, a program whose main() builds the same graph and calls
/// lp::launch: usually the program's own binary, with the graph built in a
/// function both share. A restarted crash is no failure of the program
/// (docs/launching.md, "test_multi_processing"). It runs only under a test:
/// from main(), use lp::local_multi_processing.
struct test_multi_processing {
  /// The nodes' lp::context().launch: "test_mp". No `--lp_launch` names it.
  static constexpr std::string_view flag = "test_mp";
  /// False: only a test runs it, with lp::launch(p, options).
  static constexpr bool from_command_line = false;
  /// Calls between nodes go over HTTP, as in every launch.
  using transport = http_transport;
  /// What `lp::launch<lp::test_multi_processing>(p, options)` returns.
  using controller = lp::controller;
  /// What a test may choose.
  using options = process_test_options;
};

}  // namespace lp
