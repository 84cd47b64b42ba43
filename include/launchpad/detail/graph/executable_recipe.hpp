#pragma once

// What a launch needs to start a node that is a node of another C++
// program built with the library (a Launchpad program's launchpad.CppNode):
// that program's executable, run in its node-process mode, which builds its
// own graph and runs only the node named here. Read by the node's host
// (detail/host/executable_node.hpp).

#include <string>
#include <vector>

namespace lp::detail {

struct executable_recipe {
  std::string path;                    // absolute, checked by the describing script
  std::string node;                    // its label in that program's graph
  std::vector<std::string> arguments;  // that program's own, after argv[0]
};

}  // namespace lp::detail
