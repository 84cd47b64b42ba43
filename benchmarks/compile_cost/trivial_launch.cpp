// One trivial node and the launch.
#include <launchpad/launchpad.hpp>

struct Idle {
  void run() { lp::stop(); }
};
LP_SERVICE(Idle);

int main(int argc, char** argv) {
  lp::program p("compile_cost");
  p.add_node<Idle>("idle");
  return lp::launch(p, argc, argv);
}
