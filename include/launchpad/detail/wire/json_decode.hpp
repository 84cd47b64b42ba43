#pragma once

// from_wire<T>: a json value as a T, checked as strictly as a CBOR item:
// the value is read through its CBOR form by the one typed reader
// (cbor_decode.hpp), so both formats take and refuse the same values with
// the same messages. Only JSON bodies and unusual replies come this way.

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

// Converts like a local call would, but refuses what a local call could not
// express: 1.5 or 1e20 for an integer, "true" for a bool. Throws
// decode_error, whose message says what was expected and what came.
template <class T>
T from_wire(const json& value) {
  auto bytes = cbor_of(value);
  std::size_t at = 0;
  return cbor::read_as<T>(bytes, at, cbor::unbounded);
}

#if LP_DETAIL_DEFINE_COMPILED_PART

LP_API std::string cbor_of(const json& value) {
  std::string bytes;
  json::to_cbor(value, bytes);
  return bytes;
}

#endif  // LP_DETAIL_DEFINE_COMPILED_PART

}  // namespace lp::detail
