// expect: LP_SERVICE(Counter, add): 'add' is overloaded, a template or not public
// A remote method needs exactly one signature.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long add(long x, long times) { return total += x * times; }
  long total = 0;
};
LP_SERVICE(Counter, add);
