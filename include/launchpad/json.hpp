#pragma once

/// @file
/// lp::json, and types with their own to_json/from_json
/// (`NLOHMANN_DEFINE_TYPE_*`, an adl_serializer), as wire types.
///
/// launchpad.hpp declares lp::json but leaves nlohmann's header out: parsing
/// it is about a second of every build of every file (benchmarks/README.md,
/// "Compile cost"), and most services never need it. A file whose services
/// take or return such a type includes this header too; without it, the
/// build stops with a message that says so.
///
/// ```cpp
/// #include <launchpad/launchpad.hpp>
/// #include <launchpad/json.hpp>
///
/// struct Config {
///   lp::json get() const { return settings; }
///   lp::json settings;
/// };
/// LP_SERVICE(Config, get);
/// ```
///
/// Also here: the conversions that let structs (Hana's and plain
/// aggregates), std::optional and lp::tensor sit inside a type nlohmann
/// converts (a struct converts as the wire does: strictly).

#include <launchpad/detail/util/type_name.hpp>
#include <launchpad/detail/wire/cbor_decode.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/json_encode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/wire.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace lp::detail {

// A wire value as json: what a JSON reply would hold (typed arrays as json
// binary values; protocol::encode writes them as arrays of numbers).
template <class T>
json to_wire(const T& value) {
  std::string bytes;
  cbor::write(bytes, value);
  return json_of_written(bytes);
}

// A json value as a T, checked as strictly as a CBOR item: 1.5 or 1e20 is
// no integer, "true" no bool. Throws decode_error, whose message says what
// was expected and what came.
template <class T>
T from_wire(const json& value) {
  auto bytes = cbor_of(value);
  std::size_t at = 0;
  return cbor::read_as<T>(bytes, at, cbor::unbounded);
}

// The json and nlohmann kinds on the wire (kind.hpp declares this): their
// CBOR is nlohmann's; what comes in is read by the one CBOR lexer, with its
// depth and UTF-8 checks, then converted by nlohmann.
template <class T>
struct json_codec {
  static void write(std::string& bytes, const T& value) {
    if constexpr (std::is_same_v<T, json>)
      json::to_cbor(value, bytes);
    else
      json::to_cbor(json(value), bytes);
  }

  static void read(cbor::reader& in, T& out) {
    if constexpr (std::is_same_v<T, json>)
      out = in.read();
    else
      out = make(in);
  }

  static T make(cbor::reader& in) {
    json item = in.read();
    try {
      return item.template get<T>();
    } catch (const json::exception& e) {
      throw decode_error(std::string("cannot convert ") + describe_value(item) + " to " +
                         std::string(type_name<T>()) + ": " + e.what());
    }
  }
};

// The structs the wire reads and writes itself: Hana's, and plain
// aggregates without to_json/from_json of their own (those that cannot
// cross too, so that the wire says why). A concept, whose conjunction asks
// for an aggregate's kind only once it is one. Not an empty struct:
// nlohmann's own comparisons ask its adl_serializer about std::monostate
// before this header may be read.
template <class T>
concept wire_struct = hana_struct<T> ||
    (class_aggregate<T> && !std::is_empty_v<T> && struct_kind(wire_kind_of<T>));

}  // namespace lp::detail

namespace nlohmann {

/// A struct (a plain one, or declared with BOOST_HANA_DEFINE_STRUCT) inside
/// a type nlohmann converts: as the wire has it, an object of its fields,
/// read strictly.
template <class T>
struct adl_serializer<T, std::enable_if_t<lp::detail::wire_struct<T>>> {
  /// Writes `value` as its wire form, in plain JSON.
  static void to_json(json& j, const T& value) {
    if constexpr (lp::wire_type<T>) {
      j = lp::detail::to_wire(value);
      lp::detail::typed_array::expand(j);  // plain JSON, as nlohmann writes a vector
    } else {
      lp::detail::explain_wire_type<T>();
    }
  }
  /// Reads `value` from its wire form.
  /// @throws lp::decode_error for a value that does not fit T
  static void from_json(const json& j, T& value) {
    if constexpr (lp::wire_type<T>)
      value = lp::detail::from_wire<T>(j);
    else
      lp::detail::explain_wire_type<T>();
  }
};

/// An lp::tensor inside a type nlohmann converts, as the wire has it:
/// `{"shape": [...], "data": ...}`, the data a typed array (a binary value).
template <class T>
struct adl_serializer<lp::tensor<T>> {
  /// Writes `t` as its wire form.
  static void to_json(json& j, const lp::tensor<T>& t) { j = lp::detail::to_wire(t); }
  /// Reads `t` from its wire form.
  /// @throws lp::decode_error for a value that is no tensor of T
  static void from_json(const json& j, lp::tensor<T>& t) {
    t = lp::detail::from_wire<lp::tensor<T>>(j);
  }
};

#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR < 12
/// A std::optional inside a type nlohmann converts: null when empty (as
/// nlohmann itself has it from 3.12).
template <class T>
struct adl_serializer<std::optional<T>> {
  /// Writes the value, or null.
  static void to_json(json& j, const std::optional<T>& value) {
    if (value)
      j = *value;
    else
      j = nullptr;
  }
  /// Reads the value; null makes it empty.
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null())
      value.reset();
    else
      value = j.get<T>();
  }
};
#endif

}  // namespace nlohmann
