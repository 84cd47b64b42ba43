#pragma once

// Wire protocol v1 over HTTP; docs/protocol.md is its description for users.

#include <launchpad/wire.hpp>
#include <optional>
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

// Throws json::exception when the bytes are not a value in that format.
inline json decode(std::string_view body, format f) {
  if (f == format::json) return json::parse(body);
  return json::from_cbor(body);
}

inline json error_body(std::string_view code, std::string_view message, std::string_view node,
                       std::string_view method) {
  return {{"error", {{"code", code}, {"message", message}, {"node", node}, {"method", method}}}};
}

}  // namespace lp::detail::protocol
