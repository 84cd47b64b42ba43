#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <string>

namespace lp::detail {

// What a node's process uses, as the kernel counts it; every node of a
// process reports the same.
struct process_figures {
  long pid = 0;
  std::string host;
  double resident_bytes = 0;
  double cpu_seconds = 0;
  long threads = 0;
  long restarts = 0;  // of this node's process, by its launcher
  // Its shared memory for calls on its host (wire/shared_memory.hpp).
  struct shared_memory_figures {
    double bytes = 0;      // of the segments it holds now
    double messages = 0;   // whose large arrays went through a segment
    double fallbacks = 0;  // ... that went through the socket instead: at the cap
    double kept = 0;       // segments it lent that a peer kept
  } shared_memory;
};

// Set by a launcher in a node process's environment: how often it restarted it.
inline constexpr const char* restarts_env = protocol::environment::restarts;

LP_API process_figures this_process_figures();

}  // namespace lp::detail
