// expect: for a Python service (LP_PYTHON): each argument goes to the class's __init__
// A raw pointer has no wire form: it cannot reach a Python constructor.
#include <launchpad/launchpad.hpp>

struct Learner {
  double update(double x);
};
LP_SERVICE(Learner, update);
LP_PYTHON(Learner, "learner", "Learner");

int main() {
  lp::program p("p");
  int not_sendable = 0;
  p.add_node<Learner>("learner", &not_sendable);
}
