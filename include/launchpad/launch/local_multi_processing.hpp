#pragma once

#include <launchpad/launch/policy.hpp>
#include <string_view>

namespace lp {

// Every node its own process: the launcher starts this same program again
// once per node (or per colocated group), with the same arguments; each
// process builds the same program graph and runs only its own nodes. The
// nodes find each other through the launcher (a rendezvous on loopback), so
// no port is chosen in advance. Ctrl+C or SIGTERM stops every node (each
// gets SIGTERM, and is killed after --lp_termination_notice_secs); a second
// Ctrl+C kills them at once. When the launcher dies, even by SIGKILL, its
// node processes die with it.
struct local_multi_processing {
  static constexpr std::string_view flag = "local_mp";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
};

}  // namespace lp
