// expect: LP_PYTHON(Learner, ...): write LP_SERVICE(Learner, methods...) first
// A Python service's methods are listed by LP_SERVICE, which is missing here.
#include <launchpad/launchpad.hpp>

struct Learner {
  double update(double x);
};
LP_PYTHON(Learner, "learner", "Learner");

int main() {}
