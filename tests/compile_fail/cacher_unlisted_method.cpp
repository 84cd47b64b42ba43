// expect: lp::cacher<T, &T::m>: LP_SERVICE(T, ...) does not list m
// expect: cacher<Learner, &Learner::steps>
// expect-not: is not a service
// expect-not: cannot be built from these arguments
// A cacher serves a method of T's LP_SERVICE; steps is a member of Learner
// but not listed. The cacher's message says so, alone: the cacher stays a
// service (of no methods), so add_node adds no "T is not a service" (g++,
// clang++) nor "T cannot be built" (clang++, for which a class whose
// static_assert failed is broken) after it.
#include <launchpad/cacher.hpp>
#include <launchpad/launchpad.hpp>

struct Learner {
  long parameters() { return 1; }
  long steps() { return 2; }
};
LP_SERVICE(Learner, parameters);

void build(lp::program& p) {
  auto learner = p.add_node<Learner>("learner");
  p.add_node<lp::cacher<Learner, &Learner::steps>>("steps", learner);
}
