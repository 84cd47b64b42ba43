// expect: lp::client<Counter>::add: an argument does not convert to the parameter type Counter::add declares
// client.async checks its calls the same way as the blocking members.
#include <future>
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

std::future<long> call(const lp::client<Counter>& counter) { return counter.async.add("text"); }
