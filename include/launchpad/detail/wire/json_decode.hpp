#pragma once

// JSON in: a json value is turned into its CBOR form and read by the one
// typed reader (cbor_decode.hpp), so both formats take and refuse the same
// values with the same messages (lp::detail::from_wire, <launchpad/json.hpp>;
// JSON bodies, arguments.hpp).

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/cbor_decode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/decode_error.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <string>

namespace lp::detail {

// A json value in CBOR (typed arrays are its tagged byte strings).
LP_API std::string cbor_of(const json& value);

}  // namespace lp::detail
