// expect: LP_SERVICE(T, m): T has no member named m
// expect: listed<lp_service_definition<Counter>::lp_method_nonexistent>::is_a_member_of<Counter>
// LP_SERVICE lists a name that Counter does not have.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add, nonexistent);
