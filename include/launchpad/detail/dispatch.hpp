#pragma once

// What a node does with a call, from the request's bytes to the reply's
// bytes, with no socket in the way: the whole path a hostile or buggy peer
// can reach (tests/fuzz drives it directly).

#include <algorithm>
#include <cmath>
#include <launchpad/detail/node.hpp>
#include <launchpad/detail/protocol.hpp>
#include <launchpad/error.hpp>
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

// Calls the method with decoded positional arguments and returns the result,
// or the error, as a reply in `reply_format` (docs/protocol.md lists every
// status). The path of every call, over HTTP or direct.
inline reply answer(node_instance& node, const std::string& label, const std::string& method,
                    const json& args, protocol::format reply_format) {
  auto fail = [&](int status, std::string_view code, const std::string& message) {
    return reply{status, protocol::error_body(code, message, label, method), reply_format};
  };
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

// Decodes the body (in `format`) into the positional arguments and answers.
inline reply dispatch(node_instance& node, const std::string& label, const std::string& method,
                      protocol::format format, protocol::format reply_format,
                      std::string_view body) {
  json args;
  try {
    args = protocol::decode(body, format);
  } catch (const std::exception& e) {
    return reply{400,
                 protocol::error_body("bad_request",
                                      std::string("the body is not valid ") +
                                          (format == protocol::format::cbor ? "CBOR" : "JSON") +
                                          ": " + e.what(),
                                      label, method),
                 reply_format};
  }
  return answer(node, label, method, args, reply_format);
}

// The result in a reply, or the lp::remote_error it stands for: what a
// client makes of any reply.
inline json result_of(const std::string& node, const std::string& method, int status, json&& reply) {
  if (status == 200 && reply.is_object() && reply.contains("result")) return std::move(reply["result"]);
  const json* error = reply.is_object() && reply.contains("error") ? &reply["error"] : nullptr;
  auto text = [&](const char* key, const std::string& fallback) {
    return error && error->contains(key) && (*error)[key].is_string() ? (*error)[key].get<std::string>()
                                                                      : fallback;
  };
  throw remote_error(node, method, text("code", "http_" + std::to_string(status)),
                     text("message", "HTTP status " + std::to_string(status)), status);
}

}  // namespace lp::detail
