// expect: lp::client<T>::m: argument 1 does not convert to the type of parameter 1 of T::m
// expect: method<&Counter::add>::argument<1>::is<const char (&)[5]>::convertible_to<long
// client.async checks its calls the same way as the blocking members.
#include <future>
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

std::future<long> call(const lp::client<Counter>& counter) {
  return counter.async.add("text");
}
