// expect: LP_SERVICE(T, m): m is overloaded, a template or not public
// expect: listed<lp_service_definition<Counter>::lp_method_add>::has_one_public_signature_in<Counter>
// A remote method needs exactly one signature.
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long add(long x, long times) { return total += x * times; }
  long total = 0;
};
LP_SERVICE(Counter, add);
