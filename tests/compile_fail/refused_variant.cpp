// expect: std::variant has no wire form
// expect: wire_diagnosis<std::variant<double
// A std::variant has no wire form (nothing on the wire would say which
// alternative it holds): not as a method's parameter or result, not as a
// member of a struct that crosses, and not in lp::json either.
#include <boost/hana/define_struct.hpp>
#include <launchpad/json.hpp>
#include <string>
#include <variant>

struct Shape {
  BOOST_HANA_DEFINE_STRUCT(Shape, (std::variant<double, std::string>, size));
};

int main() {
  lp::json j = Shape{};
  return j.is_null();
}
