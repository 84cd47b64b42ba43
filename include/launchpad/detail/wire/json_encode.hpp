#pragma once

// JSON out: a value is written as CBOR (cbor_encode.hpp, the one writer) and
// read back by the generic reader, so a JSON reply (reply_to_json) and
// lp::detail::to_wire (<launchpad/json.hpp>) hold what a CBOR one would.
// Vectors of numbers and tensors' data are typed arrays in it (json binary
// values), which protocol::encode writes as arrays of numbers.

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// Our own bytes, read back: no bound on nesting, and text that is not
// UTF-8 is kept for the JSON writer to replace.
LP_API json json_of_written(std::string_view bytes);

}  // namespace lp::detail
