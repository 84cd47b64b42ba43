// expect: LP_SERVICE(Registry, node): lp::client uses the name 'node' itself
// lp::client<T> has its own node() (the label it calls), so no method may take that name.
#include <launchpad/launchpad.hpp>
#include <string>

struct Registry {
  std::string node(int index) const { return "n" + std::to_string(index); }
};
LP_SERVICE(Registry, node);
