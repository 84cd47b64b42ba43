#pragma once

// What a node does with a call, from the request's bytes to the reply's
// bytes, with no socket in the way: the whole path a hostile or buggy peer
// can reach (tests/fuzz drives it directly).

#include <launchpad/detail/node.hpp>
#include <launchpad/detail/protocol.hpp>
#include <launchpad/wire.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

struct reply {
  int status = 200;
  json body;
  protocol::format format = protocol::format::json;
};

// Decodes the positional arguments, calls the method and encodes the
// result or the error (docs/protocol.md lists every status).
inline reply dispatch(node_instance& node, const std::string& label, const std::string& method,
                      protocol::format format, std::string_view body) {
  auto fail = [&](int status, std::string_view code, const std::string& message) {
    return reply{status, protocol::error_body(code, message, label, method), format};
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
    return reply{200, {{"result", node.call(method, args)}}, format};
  } catch (const call_failure& e) {
    return fail(e.status, e.code, e.what());
  } catch (const std::exception& e) {
    return fail(500, "remote_exception", e.what());
  } catch (...) {
    return fail(500, "remote_exception", "an exception not derived from std::exception");
  }
}

}  // namespace lp::detail
