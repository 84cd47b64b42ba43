#pragma once

#include <httplib.h>

#include <cstddef>
#include <string_view>

namespace lp::detail {

// A request header's value, or "" if it has none: what
// Request::get_header_value gives, without its cost. httplib's lookup builds
// a std::string of the name and walks a map that compares names through the
// locale's tolower, a character at a time: about 1,200 instructions, a
// dozen times a call (benchmarks/README.md, "One call, profiled"). A
// request has a handful of headers; a scan that compares lengths first
// does with a few dozen. Names compare without case (RFC 9110), in ASCII.
inline std::string_view header_value(const httplib::Request& req, std::string_view name) {
  auto same = [name](const std::string& other) {
    if (other.size() != name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
      char a = name[i], b = other[i];
      if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
      if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
      if (a != b) return false;
    }
    return true;
  };
  // Headers of one name sit together in httplib's map (0.11's ordered one,
  // 0.18's hashed one): the first of them is the one its lookup gives.
  for (const auto& [key, value] : req.headers)
    if (same(key)) return value;
  return {};
}

}  // namespace lp::detail
