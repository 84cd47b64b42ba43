#pragma once

// The launch options of the unit tests that run tests/processes/program.cpp
// under lp::test_multi_processing (command.hpp stays free of the library:
// the Slurm tests build without it).

#include <chrono>
#include <launchpad/launchpad.hpp>
#include <string>

#include "command.hpp"

namespace test_process {

// A test_multi_processing launch of one of tests/processes/program.cpp's
// scenarios, its files under `dir`.
inline lp::process_test_options scenario_options(const std::string& scenario,
                                                 const scratch& dir) {
  lp::process_test_options options;
  options.executable = program_path();
  options.arguments = {"--scenario=" + scenario, "--dir=" + dir.path};
  options.termination_notice = std::chrono::seconds(5);
  return options;
}

}  // namespace test_process
