// The user's program: three services, a graph and the launch.
#include "services.hpp"

int main(int argc, char** argv) {
  lp::program p("compile_cost");
  auto server = p.add_node<ParameterServer>("server");
  auto logger = p.add_node<Logger>("logger");
  p.add_node<Worker>("worker", server, logger);
  return lp::launch(p, argc, argv);
}
