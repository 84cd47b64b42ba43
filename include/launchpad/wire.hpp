#pragma once

// What may cross the wire: every method parameter and return type of a
// service must be an lp::wire_type (detail/wire/kind.hpp classifies them;
// docs/protocol.md, "Values", lists the kinds and their forms):
// numbers, bool, std::string, std::optional, std::vector, std::array,
// std::set, std::map and std::unordered_map with std::string keys,
// std::pair, std::tuple, structs declared with BOOST_HANA_DEFINE_STRUCT,
// lp::tensor, lp::json, enums, and types with their own to_json/from_json
// (NLOHMANN_DEFINE_TYPE_*). Other containers, std::variant, maps with
// other keys, views and pointers are refused at compile time, each with the
// reason.
//
// Hana structs and std::optional convert to and from lp::json too, so
// they may sit inside a type nlohmann converts; a Hana struct converts as
// the wire does (strictly).

#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/json_encode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <optional>
#include <type_traits>

namespace nlohmann {
template <class T>
struct adl_serializer<T, std::enable_if_t<lp::detail::hana_struct<T>>> {
  static void to_json(json& j, const T& value) {
    if constexpr (lp::wire_type<T>) {
      j = lp::detail::to_wire(value);
      lp::detail::typed_array::expand(j);  // plain JSON, as nlohmann writes a vector
    } else {
      lp::detail::explain_wire_type<T>();
    }
  }
  static void from_json(const json& j, T& value) {
    if constexpr (lp::wire_type<T>) value = lp::detail::from_wire<T>(j);
    else lp::detail::explain_wire_type<T>();
  }
};

#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR < 12
// nlohmann learnt std::optional (null when empty) in 3.12.
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) j = *value;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) value.reset();
    else value = j.get<T>();
  }
};
#endif
}  // namespace nlohmann
