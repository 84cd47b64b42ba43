// expect: LP_SERVICE(Counter, total): 'total' is not a non-static member function of Counter
// total is a data member, not a method.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add, total);
