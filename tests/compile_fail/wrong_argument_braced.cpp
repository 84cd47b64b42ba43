// expect: lp::client<T>::m: argument 1 does not initialize parameter 1 of T::m
// expect: method<&Counter::add>::argument<1>::from<const char (&)[5]>::initializes<long
// A braced argument is checked like a local call's: {"text"} does not make a long.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

long call(const lp::client<Counter>& counter) {
  return counter.add({"text"});
}
