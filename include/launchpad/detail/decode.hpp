#pragma once

#include <launchpad/detail/type_name.hpp>
#include <launchpad/wire.hpp>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace lp::detail {

// A value that does not fit the type it must become. what() says what was
// expected and what came, for the caller's "argument 2 of add: ..." message.
struct decode_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string describe_value(const json& value) {
  auto text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
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
    return value.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw fail("a string");
    return value.get<std::string>();
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
