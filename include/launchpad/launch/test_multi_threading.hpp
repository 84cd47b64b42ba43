#pragma once

#include <cstddef>
#include <launchpad/launch/controller.hpp>
#include <launchpad/launch/policy.hpp>
#include <string>
#include <string_view>

namespace lp {

// What a test may choose about a program it launches as threads.
struct test_options {
  bool insecure = false;          // nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;  // the largest request body a node accepts
  // As --lp_header_timeout_secs, --lp_min_rate_kib_per_sec and
  // --lp_max_connections (docs/protocol.md, "Limits").
  int header_timeout_secs = 10;
  std::size_t min_rate_kib_per_sec = 64;
  std::size_t max_connections = 8192;
  // As --lp_system_malloc: leave glibc's malloc settings of the test process
  // alone (docs/concepts.md, "Big values").
  bool system_malloc = false;
  // As --lp_tls=on: the nodes serve and call over TLS, with credentials
  // made for this launch (docs/protocol.md, "Encryption").
  bool tls = false;
  // As --lp_python: the interpreter of the Python nodes (docs/python_nodes.md).
  std::string python = "python3";
};

// For tests: every node a thread of the test process, each serving on its
// own loopback HTTP port, as in local_multi_threading. No signal handlers.
//
//   auto running = lp::launch<lp::test_multi_threading>(p);
//   CHECK(running.client(counter).get() == 0);
//   running.wait();  // throws lp::node_failure if a node failed
//
// From a command line (--lp_launch=test_mt) it runs like local_mt, without
// signal handlers.
struct test_multi_threading {
  static constexpr std::string_view flag = "test_mt";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
  using controller = lp::controller;
  using options = test_options;
};

}  // namespace lp
