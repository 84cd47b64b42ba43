// expect: LP_SERVICE(Counter, add_to): Counter::add_to takes a parameter by non-const reference
// A remote caller's argument is a copy: writing through long& would be lost.
#include <launchpad/launchpad.hpp>

struct Counter {
  void add_to(long& x) { x += total; }
  long total = 0;
};
LP_SERVICE(Counter, add_to);
