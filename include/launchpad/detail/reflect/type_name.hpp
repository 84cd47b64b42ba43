#pragma once

#include <string>
#include <string_view>

namespace lp::detail {

// A readable name for T, for /lp/v1/describe and error messages.
template <class T>
std::string type_name() {
  std::string_view f = __PRETTY_FUNCTION__;
  auto start = f.find("T = ") + 4;
  auto end = f.find_first_of(";]", start);
  std::string name(f.substr(start, end - start));
  // The standard library's spelling of std::string helps nobody.
  for (std::string_view verbose :
       {"std::__cxx11::basic_string<char>", "std::basic_string<char>",
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char>>"}) {
    for (auto pos = name.find(verbose); pos != std::string::npos; pos = name.find(verbose))
      name.replace(pos, verbose.size(), "std::string");
  }
  return name;
}

}  // namespace lp::detail
