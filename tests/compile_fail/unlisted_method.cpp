// expect: no member named 'reset'
// Only the methods listed in LP_SERVICE are remote: reset is a member of
// Counter but not of lp::client<Counter>. (The text is the compiler's own;
// g++ and clang++ both say "no member named 'reset'".)
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  void reset() { total = 0; }
  long total = 0;
};
LP_SERVICE(Counter, add);

void call(const lp::client<Counter>& counter) { counter.reset(); }
