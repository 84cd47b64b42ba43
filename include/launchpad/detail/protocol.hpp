#pragma once

// Wire protocol v1 over HTTP; docs/protocol.md is its description for users.

#include <launchpad/wire.hpp>
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
      std::uint64_t items = info == 31 ? indefinite : major == 5 ? argument * 2 : argument;
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
// std::length_error for a value nested too deep.
inline json decode(std::string_view body, format f) {
  if (f == format::cbor) {
    if (cbor_too_deep(body))
      throw std::length_error("it nests deeper than " + std::to_string(max_depth) + " levels");
    return json::from_cbor(body);
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
  return {{"error", {{"code", code}, {"message", message}, {"node", node}, {"method", method}}}};
}

}  // namespace lp::detail::protocol
