// expect: lp::launch<P>(p, argc, argv): this policy runs only under a test
// A policy for tests has no main() of its own to run from.
#include <launchpad/launchpad.hpp>

struct Idle {
  void run() {}
};
LP_SERVICE(Idle);

int main(int argc, char** argv) {
  lp::program p("misuse");
  p.add_node<Idle>("idle");
  return lp::launch<lp::test_multi_processing>(p, argc, argv);
}
