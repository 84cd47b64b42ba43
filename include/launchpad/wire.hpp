#pragma once

// What may cross the wire: every method parameter and return type of a
// service must be a wire_type. nlohmann_json decides which types those are:
// arithmetic types, strings, standard containers of wire types, and user types
// with to_json/from_json (NLOHMANN_DEFINE_TYPE_*). Structs declared with
// BOOST_HANA_DEFINE_STRUCT are wire types too, as JSON objects keyed by member,
// and so is std::optional (null when empty), which nlohmann only learnt in 3.12.

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace lp {

using json = nlohmann::json;

template <class T>
concept wire_type =
    std::is_void_v<T> ||
    (std::is_object_v<T> && !std::is_pointer_v<T> &&
     requires(json& j, const T& value) {
       j = value;
       j.template get<T>();
     });

namespace detail {
template <class T>
concept hana_struct = std::is_class_v<T> && boost::hana::Struct<T>::value;
}  // namespace detail

}  // namespace lp

namespace nlohmann {
template <class T>
struct adl_serializer<T, std::enable_if_t<lp::detail::hana_struct<T>>> {
  static void to_json(json& j, const T& value) {
    j = json::object();
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto member) {
      j[boost::hana::to<const char*>(boost::hana::first(member))] =
          boost::hana::second(member)(value);
    });
  }
  static void from_json(const json& j, T& value) {
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto member) {
      auto& field = boost::hana::second(member)(value);
      j.at(boost::hana::to<const char*>(boost::hana::first(member))).get_to(field);
    });
  }
};

#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR < 12
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
