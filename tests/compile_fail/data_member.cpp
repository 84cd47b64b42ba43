// expect: LP_SERVICE(T, m): m is not a non-static member function of T
// expect: listed<lp_service_definition<Counter>::lp_method_total>::is_a_non_static_member_function_of<Counter>
// total is a data member, not a method.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add, total);
