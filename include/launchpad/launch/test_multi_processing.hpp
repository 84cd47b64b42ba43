#pragma once

#include <chrono>
#include <cstddef>
#include <launchpad/launch/controller.hpp>
#include <launchpad/launch/policy.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

// What a test may choose about a program it launches as processes.
struct process_test_options {
  std::string executable;              // the nodes' program (required)
  std::vector<std::string> arguments;  // its arguments after argv[0]
  std::chrono::seconds termination_notice{10};
  terminal_kind terminal = terminal_kind::current;  // where the nodes' output goes
  bool insecure = false;          // nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;  // the largest request body a node accepts
};

// For tests of a program as processes, like local_multi_processing. The test
// process is the launcher; each node runs in a process of `executable`, a
// program whose main() builds the same graph and calls lp::launch (usually
// the program's own binary; build the graph in a function both share).
// It runs only under a test: from main(), use local_multi_processing.
//
//   auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
//   running.wait({"producers"});
//   CHECK(running.client(counter).get() == 4000);
struct test_multi_processing {
  static constexpr std::string_view flag = "test_mp";
  static constexpr bool from_command_line = false;
  using transport = http_transport;
  using controller = lp::controller;
  using options = process_test_options;
};

}  // namespace lp
