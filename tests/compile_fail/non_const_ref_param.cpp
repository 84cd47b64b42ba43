// expect: LP_SERVICE(T, m): T::m takes a parameter by non-const reference
// expect: method<&Counter::add_to>::takes<long
// A remote caller's argument is a copy: writing through long& would be lost.
#include <launchpad/launchpad.hpp>

struct Counter {
  void add_to(long& x) { x += total; }
  long total = 0;
};
LP_SERVICE(Counter, add_to);
