#pragma once

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

// Every node a thread of one process, each serving on its own loopback HTTP
// port. Ctrl+C (SIGINT) or SIGTERM stops the program gracefully; a second
// one exits at once.
struct local_multi_threading {
  static constexpr std::string_view flag = "local_mt";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
};

}  // namespace lp
