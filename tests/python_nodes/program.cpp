// The node processes of tests/python_nodes/test_processes.cpp:
//   python_nodes_program --scenario=<name> --lp_python=<interpreter> [--lp_... flags]
#include <string_view>

#include "graphs.hpp"

int main(int argc, char** argv) {
  std::string scenario;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with("--scenario=")) scenario = argv[i] + 11;
  lp::program p("pyn_" + scenario);
  pyn::make(p, scenario);
  return lp::launch<lp::local_multi_processing>(p, argc, argv);
}
