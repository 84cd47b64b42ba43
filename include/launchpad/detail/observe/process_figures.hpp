#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <launchpad/detail/config.hpp>
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
};

// Set by a launcher in a node process's environment: how often it restarted it.
inline constexpr const char* restarts_env = "LP_RESTARTS";

LP_API process_figures this_process_figures();

#if LP_DETAIL_DEFINE_COMPILED_PART

LP_API process_figures this_process_figures() {
  process_figures out;
  out.pid = ::getpid();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) out.host = host;
  long pages = 0, resident = 0;
  if (std::ifstream statm("/proc/self/statm"); statm >> pages >> resident)
    out.resident_bytes =
        static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    out.cpu_seconds =
        static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::ifstream status("/proc/self/status");
  for (std::string word; status >> word;)
    if (word == "Threads:") {
      status >> out.threads;
      break;
    }
  if (const char* restarts = std::getenv(restarts_env))
    out.restarts = std::atol(restarts);
  return out;
}

#endif  // LP_DETAIL_DEFINE_COMPILED_PART

}  // namespace lp::detail
