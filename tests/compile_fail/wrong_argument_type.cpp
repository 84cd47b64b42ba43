// expect: lp::client<Counter>::add: an argument does not convert to the parameter type Counter::add declares
// A client call is checked like a local one: add takes a long, not a string.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

long call(const lp::client<Counter>& counter) { return counter.add("text"); }
