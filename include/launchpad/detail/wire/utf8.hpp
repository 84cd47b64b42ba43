#pragma once

// UTF-8 checks for what a peer sends: JSON must be UTF-8, CBOR text strings
// should be, and messages that quote a peer must stay printable.

#include <cstddef>
#include <cstdint>
#include <launchpad/detail/config.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// The length of the valid UTF-8 sequence at the start of `text`, or 0.
inline std::size_t utf8_sequence(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  std::size_t length = lead < 0x80           ? 1
                       : (lead >> 5) == 0x6  ? 2
                       : (lead >> 4) == 0xE  ? 3
                       : (lead >> 3) == 0x1E ? 4
                                             : 0;
  if (length == 0 || length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  std::uint32_t point = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) point = (point << 6) | (byte(i) & 0x3F);
  bool shortest = point >= (length == 1   ? 0u
                            : length == 2 ? 0x80u
                            : length == 3 ? 0x800u
                                          : 0x10000u);
  bool scalar = point <= 0x10FFFF && (point < 0xD800 || point > 0xDFFF);
  return shortest && scalar ? length : 0;
}

inline bool valid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    auto length = utf8_sequence(text.substr(at));
    if (length == 0) return false;
    at += length;
  }
  return true;
}

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD,
// for messages that quote what a peer sent.
LP_API std::string to_utf8(std::string_view text);

}  // namespace lp::detail
