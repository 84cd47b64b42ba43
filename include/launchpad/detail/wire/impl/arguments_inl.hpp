#pragma once

// arguments.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/arguments.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API arguments::arguments(std::string_view body, protocol::format format) {
  if (format == protocol::format::cbor) {
    if (auto starts = cbor::reader(body, protocol::max_depth).array_items()) {
      cbor_ = body;
      starts_ = std::move(*starts);
      is_array_ = true;
      return;
    }
    type_name_ = protocol::decode(body, format).type_name();
    return;
  }
  json parsed = protocol::decode(body, format);
  type_name_ = parsed.type_name();
  if (!parsed.is_array()) return;
  // Each argument in CBOR, where it starts noted as it is written.
  cbor::head(owned_, 4, parsed.size());
  starts_.reserve(parsed.size());
  for (const auto& argument : parsed) {
    starts_.push_back(owned_.size());
    json::to_cbor(argument, owned_);
  }
  cbor_ = owned_;
  is_array_ = true;
}

}  // namespace lp::detail
