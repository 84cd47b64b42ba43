// expect: add_node<T>: T is not a service
// Plain has no LP_SERVICE, so it cannot be a node.
#include <launchpad/launchpad.hpp>

struct Plain {
  void run() {}
};

void build(lp::program& p) {
  p.add_node<Plain>("plain");
}
