#pragma once
// What the wire's suites check of a value: its round trips through JSON and
// CBOR by every route, and the message each route gives for a value that
// does not fit its type, and its schema as the wire sees it
// (tests/unit-wire.cpp, unit-aggregates.cpp, unit-http.cpp).
#include <doctest/doctest.h>

#include <launchpad/detail/wire/arguments.hpp>
#include <launchpad/json.hpp>
#include <string>
#include <vector>

namespace wire_checks {
using lp::detail::from_wire;
using lp::detail::to_wire;
namespace protocol = lp::detail::protocol;

// The value after to_wire -> bytes in `format` -> decode -> from_wire.
template <class T>
T through(const T& value, protocol::format format) {
  auto bytes = protocol::encode(to_wire(value), format);
  return from_wire<T>(protocol::decode(bytes, format));
}

// The bytes lp::detail::cbor::write gives for a value.
template <class T>
std::string written(const T& value) {
  std::string bytes;
  lp::detail::cbor::write(bytes, value);
  return bytes;
}

// CBOR bytes read as a T the way a node reads an argument, checking the
// whole item was read.
template <class T>
T read_as(const std::string& bytes) {
  std::size_t at = 0;
  T value = lp::detail::cbor::read_as<T>(bytes, at, protocol::max_depth);
  CHECK(at == bytes.size());
  return value;
}

// Through JSON, through CBOR, and across the two CBOR paths: the values the
// typed writer and reader give are the json route's.
template <class T>
void check_both(const T& value) {
  CHECK((through(value, protocol::format::cbor) == value));
  CHECK((through(value, protocol::format::json) == value));
  auto bytes = written(value);
  CHECK((read_as<T>(bytes) == value));
  CHECK((from_wire<T>(protocol::decode(bytes, protocol::format::cbor)) == value));
  CHECK((read_as<T>(protocol::encode(to_wire(value), protocol::format::cbor)) == value));
}

// The message each route gives for a value that does not fit T, the value
// given as JSON text: from_wire on the json, the typed reader on its CBOR
// form, and both kinds of body as a node reads an argument. All must agree.
template <class T>
std::string misfit(const std::string& json_text) {
  auto value = lp::json::parse(json_text);
  std::vector<std::string> messages;
  auto catch_one = [&](auto&& read) {
    try {
      read();
      messages.push_back("(no error)");
    } catch (const lp::decode_error& e) {
      messages.push_back(e.reason());
    }
  };
  catch_one([&] { from_wire<T>(value); });
  auto bytes = protocol::encode(value, protocol::format::cbor);
  catch_one([&] { read_as<T>(bytes); });
  auto json_body = "[" + json_text + "]";
  catch_one([&] { lp::detail::arguments(json_body, protocol::format::json).get<T>(0); });
  auto cbor_body = protocol::encode(lp::json::array({value}), protocol::format::cbor);
  catch_one([&] { lp::detail::arguments(cbor_body, protocol::format::cbor).get<T>(0); });
  for (const auto& m : messages) CHECK(m == messages[0]);
  return messages[0];
}

// The message the typed reader gives for CBOR bytes, and the one from_wire
// gives for the json the generic reader makes of them: the same.
template <class T>
std::string misfit_cbor(const std::string& bytes) {
  std::string direct, via_json;
  try {
    read_as<T>(bytes);
  } catch (const lp::decode_error& e) {
    direct = e.reason();
  }
  try {
    from_wire<T>(protocol::decode(bytes, protocol::format::cbor));
  } catch (const lp::decode_error& e) {
    via_json = e.reason();
  }
  CHECK(direct == via_json);
  return direct;
}

// describe's schema without the spellings under "type", which are for
// people: compilers spell a type differently, its wire form is the same.
inline lp::json without_spellings(lp::json schema) {
  auto strip = [](auto& self, lp::json& node) -> void {
    if (node.is_object()) node.erase("type");
    if (node.is_structured())
      for (auto& part : node) self(self, part);
  };
  strip(strip, schema);
  return schema;
}

}  // namespace wire_checks
