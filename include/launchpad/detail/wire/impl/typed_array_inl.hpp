#pragma once

// typed_array.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/typed_array.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail::typed_array {

template <class T>
json numbers(const json::binary_t& bytes, bool little_endian) {
  json out = json::array();
  out.get_ref<json::array_t&>().reserve(bytes.size() / sizeof(T));
  for (std::size_t at = 0; at + sizeof(T) <= bytes.size(); at += sizeof(T)) {
    T element;
    std::memcpy(&element, bytes.data() + at, sizeof(T));
    if (little_endian != (std::endian::native == std::endian::little))
      element = byte_swapped(element);
    out.push_back(element);
  }
  return out;
}

inline json numbers_of(const json::binary_t& bytes, const element& e) {
  if (e.is_float)
    return e.size == 4 ? numbers<float>(bytes, e.little_endian)
                       : numbers<double>(bytes, e.little_endian);
  switch (e.size) {
    case 1:
      return e.is_signed ? numbers<std::int8_t>(bytes, true)
                         : numbers<std::uint8_t>(bytes, true);
    case 2:
      return e.is_signed ? numbers<std::int16_t>(bytes, e.little_endian)
                         : numbers<std::uint16_t>(bytes, e.little_endian);
    case 4:
      return e.is_signed ? numbers<std::int32_t>(bytes, e.little_endian)
                         : numbers<std::uint32_t>(bytes, e.little_endian);
    default:
      return e.is_signed ? numbers<std::int64_t>(bytes, e.little_endian)
                         : numbers<std::uint64_t>(bytes, e.little_endian);
  }
}

LP_API void expand(json& value) {
  if (value.is_binary()) {
    const auto& bytes = value.get_binary();
    if (!bytes.has_subtype()) return;
    if (auto e = element_of(bytes.subtype())) value = numbers_of(bytes, *e);
  } else if (value.is_structured()) {
    for (auto& element : value) expand(element);
  }
}

LP_API bool has_binary(const json& value) {
  if (value.is_binary()) return true;
  if (!value.is_structured()) return false;
  return std::any_of(value.begin(), value.end(),
                     [](const json& v) { return has_binary(v); });
}

}  // namespace lp::detail::typed_array
