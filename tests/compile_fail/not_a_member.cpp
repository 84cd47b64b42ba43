// expect: LP_SERVICE(Counter, nonexistent): Counter has no member named 'nonexistent'
// LP_SERVICE lists a name that Counter does not have.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add, nonexistent);
