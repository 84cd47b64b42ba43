// expect: lp::client<T>::m: argument 2 does not convert to the type of parameter 2 of T::m
// expect: method<&Logger::log>::argument<2>::is<const char (&)[5]>::convertible_to<long
// The message names the argument that does not fit: the first converts to
// std::string, the second is no long.
#include <launchpad/launchpad.hpp>
#include <string>

struct Logger {
  void log(const std::string& who, long level) { last = who + std::to_string(level); }
  std::string last;
};
LP_SERVICE(Logger, log);

void call(const lp::client<Logger>& logger) {
  logger.log("main", "high");
}
