#pragma once

// Where Slurm's commands are.

#include <unistd.h>

#include <cstdlib>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// The absolute path of a program in PATH, for starting it with execve.
inline std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (auto dir : split(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    auto candidate = std::string(dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw launch_error(name + " is not on PATH; is this a host of a Slurm cluster?");
}

}  // namespace lp::detail
