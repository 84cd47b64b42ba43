// expect: no member named 'reset'
// expect: lp::client<Counter>
// Only the methods listed in LP_SERVICE are remote: reset is a member of
// Counter but not of lp::client<Counter>. The text is the compiler's own
// (C++ has no hook for a failed member lookup): g++ says "'const class
// lp::client<Counter>' has no member named 'reset'", clang++ "no member
// named 'reset' in 'lp::client<Counter>'", and neither suggests a name of
// the library's: the client and its bases declare no member a user's
// method name could be mistaken for (troubleshooting.md has the fix: add
// the method to LP_SERVICE).
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  void reset() { total = 0; }
  long total = 0;
};
LP_SERVICE(Counter, add);

void call(const lp::client<Counter>& counter) {
  counter.reset();
}
