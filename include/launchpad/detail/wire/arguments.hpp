#pragma once

#include <cstddef>
#include <launchpad/detail/wire/cbor_decode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/wire.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// The positional arguments of a call, as its body carried them. A JSON body
// is parsed whole. A CBOR body is checked whole, so a malformed one is
// refused before any method runs, and each argument is read once its
// parameter's type is known, straight into that type (cbor::read_as). The
// body must outlive the arguments.
class arguments {
 public:
  // Throws what protocol::decode throws for a body that is not a value in
  // its format.
  arguments(std::string_view body, protocol::format format) {
    if (format == protocol::format::cbor) {
      if (auto starts = cbor::reader(body, protocol::max_depth).array_items()) {
        cbor_ = body;
        starts_ = std::move(*starts);
        return;
      }
    }
    parsed_ = protocol::decode(body, format);
  }

  bool is_array() const { return !cbor_.empty() || parsed_.is_array(); }
  // The JSON type of a body that is not an array, for the caller's error.
  const char* type_name() const { return parsed_.type_name(); }

  std::size_t size() const { return cbor_.empty() ? parsed_.size() : starts_.size(); }

  // Argument i (< size()) as a T; throws decode_error if it does not fit.
  template <class T>
  T get(std::size_t i) const {
    if (cbor_.empty()) return from_wire<T>(parsed_[i]);
    auto at = starts_[i];
    return cbor::read_as<T>(cbor_, at, protocol::max_depth);
  }

 private:
  json parsed_;
  std::string_view cbor_;  // empty unless a CBOR array
  std::vector<std::size_t> starts_;
};

}  // namespace lp::detail
