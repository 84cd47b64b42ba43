#pragma once

// Wire protocol v1 over HTTP; docs/protocol.md is its description for users.
// Its paths, headers, media types and error codes are protocol/constants.hpp's
// (written from protocol.toml, which the Python package reads too).

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/detail/wire/utf8.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lp::detail::protocol {

enum class format { json, cbor };

// Seconds an idle keep-alive connection stays open on a node. Clients drop
// pooled connections sooner (see http_channel), so none is closed under a
// call. An idle connection holds no thread (it is parked, serve/parking.hpp)
// and a stopping node closes it at once, so it may stay long: a caller that
// calls every few seconds keeps its connection (and its TLS session).
inline constexpr int keep_alive_seconds = 30;

// Seconds a new connection may stay silent before its first request.
inline constexpr int first_request_seconds = 1;

// The format of a body with this Content-Type, or nothing if unsupported.
// No Content-Type means JSON, so `curl -d '[1]'` works.
inline std::optional<format> format_of(std::string_view content_type) {
  auto base = content_type.substr(0, content_type.find(';'));
  while (!base.empty() && base.back() == ' ') base.remove_suffix(1);
  if (base.empty() || base == media::json || base == media::form ||
      base == media::plain_text)
    return format::json;
  if (base == media::cbor) return format::cbor;
  return std::nullopt;
}

inline const char* content_type(format f) {
  return f == format::cbor ? media::cbor : media::json;
}

// Deeper values are refused before they are built: nlohmann prints JSON
// recursively, so a few kilobytes of nesting would otherwise overflow the
// stack.
inline constexpr std::size_t max_depth = 128;

// The body of a value in format f. Typed arrays become arrays of numbers in
// JSON (typed_array.hpp).
LP_API std::string encode(const json& value, format f);

// Parses a body, refusing what nests deeper than max_depth. Throws
// json::exception or cbor::malformed for bytes that are not a value in that
// format, std::length_error for a value nested too deep and
// std::domain_error for text that is not UTF-8.
LP_API json decode(std::string_view body, format f);

LP_API json error_body(std::string_view code, std::string_view message,
                       std::string_view node, std::string_view method);

}  // namespace lp::detail::protocol
