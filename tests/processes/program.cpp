// The program the multi-processing tests launch:
//   program --scenario=<name> --dir=<writable directory> [--lp_... flags]
#include <string_view>

#include "scenarios.hpp"

int main(int argc, char** argv) {
  std::string scenario, dir = "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--scenario=")) scenario = arg.substr(11);
    if (arg.starts_with("--dir=")) dir = arg.substr(6);
  }
  lp::program p("scenario_" + scenario);
  scenarios::make(p, scenario, dir);
  return lp::launch<lp::local_multi_processing>(p, argc, argv);
}
