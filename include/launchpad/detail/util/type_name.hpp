#pragma once

// Names of types, for /lp/v1/describe and error messages. A type's name is
// a constant, cut at compile time from the compiler's own spelling: a
// service's types cost its translation unit no code; the compiled part makes
// the spelling readable when a message or describe needs it.

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

template <class T>
constexpr std::string_view pretty_function() {
  return __PRETTY_FUNCTION__;
}

// The T in "... [with T = int; ...]" (g++) or "... [T = int]" (clang).
// Plain loops: g++ cannot run string_view::find in a constant expression
// under -fsanitize=undefined.
constexpr std::string_view spelled_type(std::string_view pretty) {
  constexpr std::string_view key = "T = ";
  std::size_t start = 0;
  auto key_at = [&](std::size_t at) {
    for (std::size_t i = 0; i < key.size(); ++i)
      if (pretty[at + i] != key[i]) return false;
    return true;
  };
  while (start + key.size() <= pretty.size() && !key_at(start)) ++start;
  start += key.size();
  std::size_t end = start;
  while (end < pretty.size() && pretty[end] != ';' && pretty[end] != ']') ++end;
  return pretty.substr(start, end - start);
}

// T as the compiler spells it.
template <class T>
inline constexpr std::string_view type_spelling = spelled_type(pretty_function<T>());

// A spelling as messages write it: the standard library's long names for
// std::string shortened.
LP_API std::string readable_type(std::string_view spelling);

template <class T>
std::string type_name() {
  return readable_type(type_spelling<T>);
}

}  // namespace lp::detail
