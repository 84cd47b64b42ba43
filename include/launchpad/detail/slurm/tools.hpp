#pragma once

// Where Slurm's commands are.

#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

// The absolute path of a program in PATH, for starting it with execve.
inline std::string find_program(const std::string& name) {
  if (auto found = on_path(name)) return *found;
  throw launch_error(name + " is not on PATH; is this a host of a Slurm cluster?");
}

}  // namespace lp::detail
