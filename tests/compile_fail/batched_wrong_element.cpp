// expect: lp::client<Policy>::act: an argument does not convert
// Callers of a batched method pass one element, not a vector.
#include <launchpad/launchpad.hpp>

struct Policy {
  std::vector<int> act(std::vector<float> observations) {
    return std::vector<int>(observations.size());
  }
};
LP_SERVICE(Policy, act);
LP_BATCHED(Policy, act, 64, std::chrono::milliseconds(5));

int call(const lp::client<Policy>& policy) { return policy.act(std::vector<float>{1.0f}); }
