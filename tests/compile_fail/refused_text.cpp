// expect: text crosses the wire as std::string (UTF-8)
// expect: wire_diagnosis<std::basic_string_view<char
// A std::string_view has no wire form: what arrives is a copy, so a
// struct that crosses holds a std::string.
#include <boost/hana/define_struct.hpp>
#include <launchpad/json.hpp>
#include <string_view>

struct Line {
  BOOST_HANA_DEFINE_STRUCT(Line, (std::string_view, text));
};

int main() {
  lp::json j = Line{};
  return j.is_null();
}
