// Three services and a graph, but no launch.
#include "services.hpp"

int main() {
  lp::program p("compile_cost");
  auto server = p.add_node<ParameterServer>("server");
  auto logger = p.add_node<Logger>("logger");
  p.add_node<Worker>("worker", server, logger);
  return static_cast<int>(p.nodes().size()) == 3 ? 0 : 1;
}
