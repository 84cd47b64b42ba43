#pragma once

// Wire protocol v1 over HTTP; docs/protocol.md is its description for users.

#include <launchpad/wire.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::protocol {

inline constexpr std::string_view call_prefix = "/lp/v1/call/";
inline constexpr const char* describe_path = "/lp/v1/describe";
inline constexpr const char* health_path = "/lp/v1/health";
inline constexpr const char* json_type = "application/json";
inline constexpr const char* cbor_type = "application/cbor";

enum class format { json, cbor };

// The format of a body with this Content-Type, or nothing if unsupported.
// No Content-Type means JSON, so `curl -d '[1]'` works.
inline std::optional<format> format_of(std::string_view content_type) {
  auto base = content_type.substr(0, content_type.find(';'));
  while (!base.empty() && base.back() == ' ') base.remove_suffix(1);
  if (base.empty() || base == json_type || base == "application/x-www-form-urlencoded" ||
      base == "text/plain")
    return format::json;
  if (base == cbor_type) return format::cbor;
  return std::nullopt;
}

inline const char* content_type(format f) { return f == format::cbor ? cbor_type : json_type; }

inline std::string encode(const json& value, format f) {
  if (f == format::json) return value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  json::to_cbor(value, out);
  return out;
}

// The length of the valid UTF-8 sequence at the start of `text`, or 0.
inline std::size_t utf8_sequence(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                                      : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  std::uint32_t point = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) point = (point << 6) | (byte(i) & 0x3F);
  bool shortest = point >= (length == 1 ? 0u : length == 2 ? 0x80u : length == 3 ? 0x800u : 0x10000u);
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
inline std::string to_utf8(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    auto length = utf8_sequence(text.substr(at));
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

// Whether every string (and object key) in `value` is valid UTF-8: CBOR text
// strings may hold any bytes, and JSON cannot carry them on.
inline bool all_text_valid(const json& value) {
  if (value.is_string()) return valid_utf8(value.get_ref<const std::string&>());
  if (value.is_array())
    return std::all_of(value.begin(), value.end(), [](const json& v) { return all_text_valid(v); });
  if (value.is_object())
    for (const auto& [key, element] : value.items())
      if (!valid_utf8(key) || !all_text_valid(element)) return false;
  return true;
}

// Deeper values are refused before they are built: nlohmann reads CBOR
// recursively and prints JSON recursively, so a few kilobytes of nesting
// would otherwise overflow the stack.
inline constexpr std::size_t max_depth = 128;

// Whether a CBOR body nests deeper than max_depth, found without recursion
// and without reading past its end. Malformed bytes are left for the parser
// to report.
inline bool cbor_too_deep(std::string_view body) {
  std::vector<std::uint64_t> open;  // items left in each open container
  constexpr std::uint64_t indefinite = ~std::uint64_t{0};
  std::size_t at = 0;
  auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(body[i]); };
  while (at < body.size()) {
    auto initial = byte(at++);
    unsigned major = initial >> 5, info = initial & 0x1f;
    std::uint64_t argument = info;
    if (info >= 24 && info <= 27) {
      std::size_t width = std::size_t{1} << (info - 24);
      if (body.size() - at < width) return false;
      argument = 0;
      for (std::size_t i = 0; i < width; ++i) argument = (argument << 8) | byte(at++);
    } else if (info >= 28 && info <= 30) {
      return false;
    }
    bool is_break = initial == 0xff;
    if (is_break) {
      if (open.empty() || open.back() != indefinite) return false;
      open.pop_back();
    } else if (major == 2 || major == 3) {
      if (info == 31) {
        open.push_back(indefinite);  // chunks until a break
      } else {
        if (body.size() - at < argument) return false;
        at += static_cast<std::size_t>(argument);
      }
    } else if (major == 4 || major == 5) {
      // A count larger than the bytes left cannot be met; nlohmann reads the
      // largest one (2^64 - 1) as "until a break", so treat all such as that.
      bool open_ended = info == 31 || argument > body.size() - at;
      std::uint64_t items = open_ended ? indefinite : major == 5 ? argument * 2 : argument;
      if (items != 0) open.push_back(items);
      if (open.size() > max_depth) return true;
      if (items != 0) continue;  // the container's own items come next
    } else if (major == 6) {
      continue;  // a tag: the item it tags follows
    }
    // One item done (a break ends one too): close every container it completes.
    while (!open.empty() && open.back() != indefinite && --open.back() == 0) open.pop_back();
  }
  return false;
}

// Parses a body, refusing what nests deeper than max_depth. Throws
// json::exception for bytes that are not a value in that format, and
// std::length_error / std::domain_error for a value nested too deep or a
// CBOR text string that is not UTF-8.
inline json decode(std::string_view body, format f) {
  if (f == format::cbor) {
    if (cbor_too_deep(body))
      throw std::length_error("it nests deeper than " + std::to_string(max_depth) + " levels");
    auto value = json::from_cbor(body);
    if (!all_text_valid(value)) throw std::domain_error("a text string is not valid UTF-8");
    return value;
  }
  json::parser_callback_t limit = [](int depth, json::parse_event_t, json&) {
    if (static_cast<std::size_t>(depth) > max_depth)
      throw std::length_error("it nests deeper than " + std::to_string(max_depth) + " levels");
    return true;
  };
  return json::parse(body, limit);
}


inline json error_body(std::string_view code, std::string_view message, std::string_view node,
                       std::string_view method) {
  return {{"error",
           {{"code", code}, {"message", to_utf8(message)}, {"node", node}, {"method", to_utf8(method)}}}};
}

}  // namespace lp::detail::protocol
