// expect: lp::client<T>: T is not a service
// Plain has no LP_SERVICE, so there is no client for it.
#include <launchpad/launchpad.hpp>

struct Plain {
  long get() const { return 1; }
};

struct User {
  lp::client<Plain> plain;
};
User user;
