// expect: add_node<T>(label, args...): T cannot be built from these arguments
// Worker is an aggregate of one int; three arguments do not fit it.
#include <launchpad/launchpad.hpp>

struct Worker {
  int n = 0;
  void run() {}
};
LP_SERVICE(Worker);

void build(lp::program& p) {
  p.add_node<Worker>("worker", 1, 2, 3);
}
