#pragma once

// How a reader quotes a value that does not fit the type it must become
// (lp::decode_error, <launchpad/error.hpp>).

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

// A value as an error message quotes it: its type and the start of its text.
LP_API std::string describe_value(const json& value);

#if LP_DETAIL_DEFINE_COMPILED_PART

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

#endif  // LP_DETAIL_DEFINE_COMPILED_PART

}  // namespace lp::detail
