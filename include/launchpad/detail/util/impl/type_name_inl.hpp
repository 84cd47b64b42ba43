#pragma once

// type_name.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/util/type_name.hpp>

namespace lp::detail {

LP_API std::string readable_type(std::string_view spelling) {
  std::string name(spelling);
  for (std::string_view verbose :
       {"std::__cxx11::basic_string<char>", "std::basic_string<char>",
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char>>"}) {
    for (auto pos = name.find(verbose); pos != std::string::npos;
         pos = name.find(verbose))
      name.replace(pos, verbose.size(), "std::string");
  }
  return name;
}

}  // namespace lp::detail
