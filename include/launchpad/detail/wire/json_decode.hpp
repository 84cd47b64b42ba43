#pragma once

#include <launchpad/detail/reflect/type_name.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/wire.hpp>
#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail {

// A value that does not fit the type it must become. what() says what was
// expected and what came, for the caller's "argument 2 of add: ..." message.
struct decode_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string describe_value(const json& value) {
  if (value.is_binary()) {
    const auto& bytes = value.get_binary();
    return "byte string of " + std::to_string(bytes.size()) + " bytes" +
           (bytes.has_subtype() ? " tagged " + std::to_string(bytes.subtype()) : "");
  }
  auto text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) {
    std::size_t cut = 37;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
    text = text.substr(0, cut) + "...";
  }
  return std::string(value.type_name()) + " " + text;
}

template <class T>
T from_wire(const json& value);

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <class T>
inline constexpr bool is_string_map = false;
template <class V, class C, class A>
inline constexpr bool is_string_map<std::map<std::string, V, C, A>> = true;

template <class T>
inline constexpr bool is_std_vector = false;
template <class E, class A>
inline constexpr bool is_std_vector<std::vector<E, A>> = true;

template <class T>
inline constexpr bool is_tuple_like = false;
template <class... E>
inline constexpr bool is_tuple_like<std::tuple<E...>> = true;
template <class A, class B>
inline constexpr bool is_tuple_like<std::pair<A, B>> = true;

// Each element of a container goes through from_wire too, so a number
// nested in a vector, a map, an optional, a tuple or a Hana struct is
// checked as strictly as a parameter. (A NLOHMANN_DEFINE_TYPE_* struct
// converts its members with nlohmann's own, laxer, rules.)
template <class T>
T from_wire_container(const json& value, auto fail) {
  if constexpr (is_optional<T>) {
    if (value.is_null()) return std::nullopt;
    return from_wire<typename T::value_type>(value);
  } else if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    if constexpr (packable<element> && std::is_same_v<T, std::vector<element>>) {
      if (value.is_binary()) {
        T out;
        if (!typed_array::unpack(value.get_binary(), out))
          throw fail("an array, or a typed array of this element type");
        return out;
      }
    }
    if (!value.is_array()) throw fail("an array");
    T out;
    out.reserve(value.size());
    for (const auto& element : value) out.push_back(from_wire<typename T::value_type>(element));
    return out;
  } else if constexpr (is_string_map<T>) {
    if (!value.is_object()) throw fail("an object");
    T out;
    for (const auto& [key, element] : value.items())
      out.emplace(key, from_wire<typename T::mapped_type>(element));
    return out;
  } else if constexpr (is_tuple_like<T>) {
    constexpr auto size = std::tuple_size_v<T>;
    if (!value.is_array() || value.size() != size) throw fail("an array of the tuple's size");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{from_wire<std::tuple_element_t<I, T>>(value[I])...};
    }(std::make_index_sequence<size>{});
  } else {
    static_assert(hana_struct<T>);
    if (!value.is_object()) throw fail("an object");
    T out{};
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto member) {
      const char* name = boost::hana::to<const char*>(boost::hana::first(member));
      if (!value.contains(name)) throw fail((std::string("an object with member '") + name + "'").c_str());
      auto& field = boost::hana::second(member)(out);
      field = from_wire<std::remove_cvref_t<decltype(field)>>(value[name]);
    });
    return out;
  }
}

// Converts like a local call would, but refuses what a local call could not
// express: nlohmann would turn 1.5 into 1 and 1e20 into garbage for an
// integer parameter, and "true" into nothing useful; a remote caller gets a
// clear error instead.
template <class T>
T from_wire(const json& value) {
  auto fail = [&](const char* expected) -> decode_error {
    return decode_error(std::string("expected ") + expected + " (" + type_name<T>() +
                        "), got " + describe_value(value));
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) throw fail("a boolean");
    return value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (value.is_number_unsigned()) {
      auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw fail("an integer in range");
      return static_cast<T>(v);
    }
    if (!value.is_number_integer()) throw fail("an integer");
    auto v = value.get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        throw fail("an integer in range");
    } else {
      if (v < 0 || static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max())
        throw fail("an integer in range");
    }
    return static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) throw fail("a number");
    auto v = value.get<double>();
    if (std::isfinite(v) && std::abs(v) > static_cast<double>(std::numeric_limits<T>::max()))
      throw fail("a number in range");
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw fail("a string");
    return value.get<std::string>();
  } else if constexpr (is_optional<T> || is_std_vector<T> || is_string_map<T> ||
                       is_tuple_like<T> || hana_struct<T>) {
    return from_wire_container<T>(value, fail);
  } else {
    try {
      return value.get<T>();
    } catch (const json::exception& e) {
      throw decode_error(std::string("cannot convert ") + describe_value(value) + " to " +
                         type_name<T>() + ": " + e.what());
    }
  }
}

}  // namespace lp::detail
