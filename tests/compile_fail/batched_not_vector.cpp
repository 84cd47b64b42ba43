// expect: a batched method takes a std::vector for every parameter
// A batched method receives every waiting caller's argument at once, so its
// parameter must be a vector of what one caller passes.
#include <launchpad/launchpad.hpp>

struct Policy {
  int act(float observation) { return observation > 0; }
};
LP_SERVICE(Policy, act);
LP_BATCHED(Policy, act, 64, std::chrono::milliseconds(5));
