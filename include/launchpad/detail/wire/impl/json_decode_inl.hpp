#pragma once

// json_decode.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/json_decode.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string cbor_of(const json& value) {
  std::string bytes;
  json::to_cbor(value, bytes);
  return bytes;
}

}  // namespace lp::detail
