#pragma once

/// @file
/// lp::test_multi_threading, the policy for tests that runs a program as
/// threads of the test process, and its lp::test_options.

#include <cstddef>
#include <launchpad/launch/controller.hpp>
#include <launchpad/launch/policy.hpp>
#include <string>
#include <string_view>

namespace lp {

/// What a test may choose about a program it launches as threads, as
/// `lp::launch<lp::test_multi_threading>(p, options)` takes it:
///
/// ```cpp
/// auto running = lp::launch<lp::test_multi_threading>(p, {.max_body_mb = 1, .tls = true});
/// ```
struct test_options {
  bool insecure = false;          ///< nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;  ///< the largest request body a node accepts
  /// As `--lp_header_timeout_secs`: how long a request's headers may take
  /// (docs/protocol.md, "Limits").
  int header_timeout_secs = 10;
  /// As `--lp_min_rate_kib_per_sec`: the slowest a request's body may come,
  /// or a reply be read (docs/protocol.md, "Limits").
  std::size_t min_rate_kib_per_sec = 64;
  /// As `--lp_max_connections`: the most open connections to one node, idle
  /// or not (docs/protocol.md, "Limits").
  std::size_t max_connections = 8192;
  /// As `--lp_system_malloc`: leave glibc's malloc settings of the test
  /// process alone (docs/concepts.md, "Big values").
  bool system_malloc = false;
  /// As `--lp_tls=on`: the nodes serve and call over TLS, with credentials
  /// made for this launch (docs/protocol.md, "Encryption").
  bool tls = false;
  /// As `--lp_python`: the interpreter of the Python nodes, a name looked up
  /// on PATH or a path (docs/python_nodes.md).
  std::string python = "python3";
};

/// For tests: every node a thread of the test process, each serving on its
/// own loopback HTTP port, as in lp::local_multi_threading, without signal
/// handlers or a run directory.
///
/// ```cpp
/// auto running = lp::launch<lp::test_multi_threading>(p);
/// CHECK(running.client(counter).get() == 0);
/// running.wait();  // throws lp::node_failure if a node failed
/// ```
///
/// From a command line (`--lp_launch=test_mt`) it runs like local_mt,
/// without signal handlers; meson test runs whole programs so
/// (docs/launching.md, "test_multi_threading").
struct test_multi_threading {
  /// Its name on the command line: `--lp_launch=test_mt`.
  static constexpr std::string_view flag = "test_mt";
  /// True: a program's main() may run it too, with lp::launch(p, argc, argv).
  static constexpr bool from_command_line = true;
  /// Calls between nodes go over HTTP, as in every launch.
  using transport = http_transport;
  /// What `lp::launch<lp::test_multi_threading>(p, options)` returns.
  using controller = lp::controller;
  /// What a test may choose.
  using options = test_options;
};

}  // namespace lp
