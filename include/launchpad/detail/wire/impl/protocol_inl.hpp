#pragma once

// protocol.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/protocol.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail::protocol {

LP_API std::string encode(const json& value, format f) {
  if (f == format::cbor) {
    std::string out;
    json::to_cbor(value, out);
    return out;
  }
  auto text = [](const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (!typed_array::has_binary(value)) return text(value);
  json expanded = value;
  typed_array::expand(expanded);
  return text(expanded);
}

LP_API json decode(std::string_view body, format f) {
  if (f == format::cbor) return cbor::read(body, max_depth);
  json::parser_callback_t limit = [](int depth, json::parse_event_t, json&) {
    if (static_cast<std::size_t>(depth) > max_depth)
      throw std::length_error("it nests deeper than " + std::to_string(max_depth) +
                              " levels");
    return true;
  };
  return json::parse(body, limit);
}

LP_API json error_body(std::string_view code, std::string_view message,
                       std::string_view node, std::string_view method) {
  return {{"error",
           {{"code", code},
            {"message", to_utf8(message)},
            {"node", node},
            {"method", to_utf8(method)}}}};
}

}  // namespace lp::detail::protocol
