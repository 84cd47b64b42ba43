// expect: lp::client<T>::m: argument 1 does not convert to the type of parameter 1 of T::m
// expect: method<&Policy::act>::argument<1>::is<std::vector<float
// expect: >::convertible_to<float>
// Callers of a batched method pass one element, not a vector.
#include <launchpad/launchpad.hpp>

struct Policy {
  std::vector<int> act(std::vector<float> observations) {
    return std::vector<int>(observations.size());
  }
};
LP_SERVICE(Policy, act);
LP_BATCHED(Policy, act, 64, std::chrono::milliseconds(5));

int call(const lp::client<Policy>& policy) {
  return policy.act(std::vector<float>{1.0f});
}
