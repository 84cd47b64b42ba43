#pragma once

// What a node does with a call, from the request's bytes to the reply's
// bytes, with no socket in the way: the whole path a hostile or buggy peer
// can reach (tests/fuzz drives it directly).

#include <algorithm>
#include <cmath>
#include <launchpad/detail/node.hpp>
#include <launchpad/detail/protocol.hpp>
#include <launchpad/wire.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// Whether every floating-point number in `value` is finite.
inline bool finite_numbers(const json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_structured())
    return std::all_of(value.begin(), value.end(), [](const json& v) { return finite_numbers(v); });
  return true;
}

struct reply {
  int status = 200;
  json body;
  protocol::format format = protocol::format::json;
};

// Decodes the positional arguments (in `format`), calls the method and
// returns the result or the error for a reply in `reply_format`
// (docs/protocol.md lists every status).
inline reply dispatch(node_instance& node, const std::string& label, const std::string& method,
                      protocol::format format, protocol::format reply_format,
                      std::string_view body) {
  auto fail = [&](int status, std::string_view code, const std::string& message) {
    return reply{status, protocol::error_body(code, message, label, method), reply_format};
  };
  json args;
  try {
    args = protocol::decode(body, format);
  } catch (const std::exception& e) {
    return fail(400, "bad_request",
                std::string("the body is not valid ") +
                    (format == protocol::format::cbor ? "CBOR" : "JSON") + ": " + e.what());
  }
  if (!args.is_array())
    return fail(400, "bad_request",
                std::string("the body must be an array of the positional arguments, got ") +
                    args.type_name());
  try {
    json result = node.call(method, args);
    if (reply_format == protocol::format::json && !finite_numbers(result))
      return fail(500, "remote_exception",
                  "the result holds NaN or infinity, which JSON cannot carry; ask for CBOR "
                  "(Accept: application/cbor)");
    return reply{200, {{"result", std::move(result)}}, reply_format};
  } catch (const call_failure& e) {
    return fail(e.status, e.code, e.what());
  } catch (const std::exception& e) {
    return fail(500, "remote_exception", e.what());
  } catch (...) {
    return fail(500, "remote_exception", "an exception not derived from std::exception");
  }
}

}  // namespace lp::detail
