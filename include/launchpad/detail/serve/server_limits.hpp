#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <string>

namespace lp::detail {

// What a server puts up with from its peers (docs/protocol.md, "Limits").
// The --lp_ flags of the same names set a node's.
struct server_limits {
  // From a request's first byte to the end of its headers
  // (--lp_header_timeout_secs); also the start a body or a reply gets before
  // its rate counts.
  std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
  // The slowest average rate at which a peer may send a body or read a
  // reply, after header_timeout (--lp_min_rate_kib_per_sec).
  std::size_t min_bytes_per_second = std::size_t{64} << 10;
  // Open connections, idle (parked) or busy; more are answered 503 on the
  // accepting thread and closed (--lp_max_connections). At most half of
  // this process's file descriptors (ulimit -n).
  std::size_t max_connections = 8192;
  // Threads serving busy connections at once; a connection past them waits
  // for one (its bytes wait in the kernel), unrefused.
  std::size_t max_threads = 2048;
  // Silence within a request, on each read; a reply's peer that takes
  // nothing for this long, on each write.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(5);
  std::chrono::milliseconds write_timeout = std::chrono::seconds(5);
};

// The connections a server may hold: max_connections, but at most half of
// the file descriptors this process may open, so that neither a flood nor
// the node's own calls and files run out of them. (The soft limit is not
// raised here: code of the user's that uses select() breaks on descriptors
// past 1023.)
inline std::size_t connection_cap(std::size_t wanted) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY)
    return wanted;
  auto half = std::max<std::size_t>(static_cast<std::size_t>(files.rlim_cur) / 2, 16);
  if (wanted <= half) return wanted;
  // The default quietly; a number asked for with a word.
  static std::atomic<bool> told{false};
  if (wanted != server_limits{}.max_connections && !told.exchange(true))
    std::cerr << "[lp] --lp_max_connections=" << wanted << " lowered to " << half
              << ": this process may open " << files.rlim_cur
              << " files (raise it with ulimit -n)" << std::endl;
  return half;
}

}  // namespace lp::detail
