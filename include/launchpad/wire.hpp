#pragma once

/// @file
/// What may cross the wire: lp::wire_type, and lp::json.

#include <launchpad/detail/wire/kind.hpp>
#include <nlohmann/json_fwd.hpp>

namespace lp {

/// What may cross the wire: every parameter and the result of a service
/// method (void too), and a checkpoint's state.
///
/// At any depth: numbers, bool, enums (as their integer), std::string,
/// std::optional, std::vector, std::array, std::set (of numbers: a typed
/// array), std::map and std::unordered_map with std::string keys,
/// std::pair, std::tuple, plain structs (aggregates: public fields, no
/// constructors, no base class; the compiler names their fields, no macro)
/// and structs declared with BOOST_HANA_DEFINE_STRUCT, lp::tensor, and, with
/// `#include <launchpad/json.hpp>`, lp::json and types with their own
/// to_json/from_json (`NLOHMANN_DEFINE_TYPE_*`).
///
/// ```cpp
/// struct Point {
///   double x = 0, y = 0;
/// };
/// static_assert(lp::wire_type<std::map<std::string, std::vector<Point>>>);
/// ```
///
/// Other containers, std::variant, maps with other keys, views and pointers
/// are refused at compile time, each with the reason and what to use
/// instead, as are structs whose fields the compiler cannot name. docs/protocol.md, "Values", gives each kind's form in JSON and
/// CBOR.
template <class T>
concept wire_type = detail::has_wire_form<T>;

/// Any JSON value, as a wire type: nlohmann's json.
///
/// Only declared here: reading and writing it needs
/// `#include <launchpad/json.hpp>`, which most programs never include, and so
/// never parse nlohmann's header.
using json = nlohmann::json;

}  // namespace lp
