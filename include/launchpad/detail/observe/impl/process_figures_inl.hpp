#pragma once

// process_figures.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/observe/process_figures.hpp>

namespace lp::detail {

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

}  // namespace lp::detail
