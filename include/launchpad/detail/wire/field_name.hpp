#pragma once

// A field's name as the compiler gives it: the one place that knows how g++
// and clang++ spell a pointer to a field in __PRETTY_FUNCTION__.
//
// spelled_field<point_at(&object.field)>() is the signature of a function
// whose template argument points at the field, which each compiler writes
// with the field's name last (object being unbuilt_object<ns::Point>.value,
// aggregate.hpp; the field y, a std::string):
//
//   g++ 12, 14:   consteval const char* lp::detail::spelled_field() [with auto
//                 Field = field_pointer<std::__cxx11::basic_string<char> >{(&
//                 unbuilt_object<ns::Point>.object_of<ns::Point>::value.ns::Point::y)}]
//   clang++ 14:   const char *lp::detail::spelled_field() [Field =
//                 {&unbuilt_object.value.y}]
//   clang++ 19:   const char *lp::detail::spelled_field() [Field = field_pointer<
//                 basic_string<char, char_traits<char>, allocator<char>>>{&unbuilt_object.value.y}]
//
// (The pointer sits in a struct: clang++ before 18 takes no pointer to a
// subobject as a template argument by itself.) field_name_in cuts the name
// out; tests/unit-wire.cpp checks it on each of these spellings and on the
// compiler that runs it. A compiler it does not know gives no name, and a
// struct whose fields have none is refused with a message (aggregate.hpp).

#include <cstddef>
#include <string_view>

namespace lp::detail {

template <class F>
struct field_pointer {
  const F* pointer;
};

template <class F>
consteval field_pointer<F> point_at(const F* field) {
  return {field};
}

// (Returns a plain pointer: a return type that names an alias would add
// "; std::string_view = ..." to the text g++ writes.)
template <auto Field>
consteval const char* spelled_field() {
  return __PRETTY_FUNCTION__;
}

// What ends each compiler's spelling after the name: the closing bracket of
// the template arguments, the struct's brace, and g++'s parenthesis.
#if defined(LP_DETAIL_FIELD_SPELLING_END)  // a test's: a compiler whose spelling changed
inline constexpr std::string_view field_spelling_end = LP_DETAIL_FIELD_SPELLING_END;
#elif defined(__clang__)
inline constexpr std::string_view field_spelling_end = "}]";
#elif defined(__GNUC__)
inline constexpr std::string_view field_spelling_end = ")}]";
#else
inline constexpr std::string_view field_spelling_end = "";  // unknown: no names
#endif

constexpr bool identifier_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || static_cast<unsigned char>(c) >= 0x80;  // UTF-8 identifiers
}

// The field's name at the end of `spelling`, before `end`: the identifier
// after the last '.' (clang++) or "::" (g++); empty if `spelling` is not
// of that form. (Plain loops, as in type_name.hpp: g++ under
// -fsanitize=undefined runs few of string_view's members at compile time.)
constexpr std::string_view field_name_in(std::string_view spelling,
                                         std::string_view end) {
  if (end.empty() || spelling.size() < end.size()) return {};
  for (std::size_t i = 0; i < end.size(); ++i)
    if (spelling[spelling.size() - end.size() + i] != end[i]) return {};
  spelling.remove_suffix(end.size());
  std::size_t start = spelling.size();
  while (start > 0 && identifier_character(spelling[start - 1])) --start;
  auto name = spelling.substr(start);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') || start == 0) return {};
  char before = spelling[start - 1];
  return before == '.' || before == ':' ? name : std::string_view{};
}

}  // namespace lp::detail
