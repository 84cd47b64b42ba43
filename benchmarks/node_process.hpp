#pragma once
// What the benchmarks that run their node as a process of this binary
// (bench_scale, bench_soak) share: the binary's path, a failure that ends
// the run, and the node process's figures as /proc gives them.
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace bench {

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] inline void fail(const std::string& what) {
  throw failure(what);
}

// The node processes run this binary again.
inline std::string this_executable() {
  std::string path(4096, '\0');
  auto length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0) fail("readlink /proc/self/exe failed");
  path.resize(static_cast<std::size_t>(length));
  return path;
}

// A field of /proc/<pid>/status ("Threads", "VmRSS"), as its number.
inline long status_field(int pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name + ":")) return std::stol(line.substr(name.size() + 1));
  fail("no " + name + " in /proc/" + std::to_string(pid) + "/status");
}

// The descriptors the process has open.
inline long descriptors_of(int pid) {
  long open = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++open;
  return open;
}

}  // namespace bench
