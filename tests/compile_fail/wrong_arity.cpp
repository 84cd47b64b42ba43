// expect: lp::client<T>::m: wrong number of arguments
// expect: method<&Counter::add>::parameter_count<1>::equals_argument_count<2>
// add declares one parameter; a call with two is rejected.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

long call(const lp::client<Counter>& counter) {
  return counter.add(1, 2);
}
