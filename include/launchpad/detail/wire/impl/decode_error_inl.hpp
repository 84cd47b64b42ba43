#pragma once

// decode_error.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/decode_error.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string describe_value(const json& value) {
  if (value.is_binary()) {
    const auto& bytes = value.get_binary();
    return "byte string of " + std::to_string(bytes.size()) + " bytes" +
           (bytes.has_subtype() ? " tagged " + std::to_string(bytes.subtype()) : "");
  }
  auto text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) {
    std::size_t cut = 37;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;  // not mid-character
    text = text.substr(0, cut) + "...";
  }
  return std::string(value.type_name()) + " " + text;
}

}  // namespace lp::detail
