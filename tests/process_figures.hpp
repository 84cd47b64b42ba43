#pragma once
// What this process holds now, read from /proc: for the tests and the
// benchmarks that bound threads, sockets and memory under load.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace figures {

inline long threads_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stol(line.substr(8));
  return -1;
}

inline long sockets_now() {
  long sockets = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) ++sockets;
  }
  return sockets;
}

// The resident set: the nodes' and the clients' of this process together.
inline double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace figures
