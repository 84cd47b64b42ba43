#pragma once

// What may cross the wire: every method parameter and return type of a
// service must be an lp::wire_type (detail/wire/kind.hpp classifies them;
// docs/protocol.md, "Values", lists the kinds and their forms):
// numbers, bool, std::string, std::optional, std::vector, std::array,
// std::set, std::map and std::unordered_map with std::string keys,
// std::pair, std::tuple, structs declared with BOOST_HANA_DEFINE_STRUCT,
// lp::tensor, enums, and, with <launchpad/json.hpp>, lp::json and types
// with their own to_json/from_json (NLOHMANN_DEFINE_TYPE_*). Other
// containers, std::variant, maps with other keys, views and pointers are
// refused at compile time, each with the reason.

#include <launchpad/detail/wire/kind.hpp>
#include <nlohmann/json_fwd.hpp>

namespace lp {

// What may cross the wire: every parameter and the result of a service
// method (void too).
template <class T>
concept wire_type = detail::has_wire_form<T>;

// Any JSON value, as a wire type (nlohmann's). Only declared here: reading
// and writing it needs <launchpad/json.hpp>, which most programs never
// include, and so never parse nlohmann's header.
using json = nlohmann::json;

}  // namespace lp
