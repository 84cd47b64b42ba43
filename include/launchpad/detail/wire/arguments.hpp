#pragma once

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/cbor_decode.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// The positional arguments of a call, as its body carried them, read as
// CBOR whatever the body's format: a CBOR body is checked whole, so a
// malformed one is refused before any method runs, and each argument is
// read once its parameter's type is known, straight into that type
// (cbor::read_as, the one reader of every type). A JSON body is parsed,
// and its arrays written as CBOR (curl's path; C++ clients send CBOR). The
// body must outlive the arguments.
class arguments {
 public:
  // Throws what protocol::decode throws for a body that is not a value in
  // its format.
  LP_API arguments(std::string_view body, protocol::format format);

  arguments(const arguments&) = delete;
  arguments& operator=(const arguments&) = delete;

  bool is_array() const { return is_array_; }
  // The JSON type of a body that is not an array, for the caller's error.
  const char* type_name() const { return type_name_; }

  std::size_t size() const { return starts_.size(); }

  // Argument i (< size()) as a T; throws decode_error if it does not fit.
  template <class T>
  T get(std::size_t i) const {
    auto at = starts_[i];
    return cbor::read_as<T>(cbor_, at, protocol::max_depth);
  }

 private:
  const char* type_name_ = "array";
  std::string owned_;                // the CBOR form of a JSON array
  std::string_view cbor_;            // the arguments, a CBOR array
  std::vector<std::size_t> starts_;  // where each argument starts in cbor_
  bool is_array_ = false;
};

}  // namespace lp::detail
