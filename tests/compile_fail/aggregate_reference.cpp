// expect: lp wire type: the compiler names a field by its address, and a field of this struct has none
// expect: or a reference (hold the value itself)
// A reference field (here with a default, so that the struct can be built
// empty) refers to nothing on the other side of the wire; the checkpoint's
// state is refused when the node saves it.
#include <launchpad/launchpad.hpp>
#include <string>

inline const std::string default_name = "tally";

struct Totals {
  long sum = 0;
  const std::string& name = default_name;
};

int main() {
  std::string bytes;
  lp::detail::cbor::write(bytes, Totals{});
}
