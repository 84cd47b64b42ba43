// expect: add #include <launchpad/json.hpp>
// A type with its own to_json/from_json crosses the wire through nlohmann,
// whose header launchpad.hpp leaves out: including nlohmann's header alone
// is not enough, <launchpad/json.hpp> brings the codec.
#include <launchpad/launchpad.hpp>
#include <nlohmann/json.hpp>
#include <string>

struct Pixel {
  int r = 0;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Pixel, r)
};

// What every call and every reply of a method taking or returning a Pixel
// does (a service's or client's own path gives the same message, under a
// longer trail of instantiations).
int main() {
  std::string body;
  lp::detail::cbor::write(body, Pixel{});
  return static_cast<int>(body.size());
}
