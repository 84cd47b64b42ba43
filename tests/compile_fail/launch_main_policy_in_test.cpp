// expect: lp::launch<P>(p, options): P is not a policy for tests
// A policy run from main() has no controller for a test to hold.
#include <launchpad/launchpad.hpp>

struct Idle {
  void run() {}
};
LP_SERVICE(Idle);

void test() {
  lp::program p("misuse");
  p.add_node<Idle>("idle");
  auto running = lp::launch<lp::local_multi_processing>(p);
}
