#pragma once

// What a node does with a call, from the request's bytes to the reply's
// bytes, with no socket in the way: the whole path a hostile or buggy peer
// can reach (tests/fuzz drives it directly).

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/arguments.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace lp::detail {

// Calls the method with the positional arguments and writes the reply, the
// result or the error, in `reply_format` over `out`; returns its status
// (docs/protocol.md lists every one). The path of every call, over HTTP or
// direct.
LP_API int answer(node_instance& node, const std::string& label, const std::string& method,
                  const arguments& args, protocol::format reply_format, written_reply& out);

// Answers a call whose body (in `format`) holds the positional arguments.
LP_API int dispatch(node_instance& node, const std::string& label, const std::string& method,
                    protocol::format format, protocol::format reply_format,
                    std::string_view body, written_reply& out);

#if LP_DETAIL_DEFINE_COMPILED_PART

LP_API int answer(node_instance& node, const std::string& label, const std::string& method,
                  const arguments& args, protocol::format reply_format, written_reply& out) {
  auto fail = [&](int status, std::string_view code, const std::string& message) {
    write_error(out, code, message, label, method, reply_format);
    return status;
  };
  if (!args.is_array())
    return fail(400, "bad_request",
                std::string("the body must be an array of the positional arguments, got ") +
                    args.type_name());
  try {
    node.call(method, args, reply_format, out);
    return 200;
  } catch (const call_failure& e) {
    return fail(e.status, e.code, e.what());
  } catch (const std::exception& e) {
    return fail(500, "remote_exception", e.what());
  } catch (...) {
    return fail(500, "remote_exception", "an exception not derived from std::exception");
  }
}

LP_API int dispatch(node_instance& node, const std::string& label, const std::string& method,
                    protocol::format format, protocol::format reply_format,
                    std::string_view body, written_reply& out) {
  // Futures the method makes go ahead of the call pool's queue (call_pool()).
  handler_scope handling;
  std::optional<arguments> args;
  try {
    args.emplace(body, format);
  } catch (const std::exception& e) {
    write_error(out, "bad_request",
                std::string("the body is not valid ") +
                    (format == protocol::format::cbor ? "CBOR" : "JSON") + ": " + e.what(),
                label, method, reply_format);
    return 400;
  }
  return answer(node, label, method, *args, reply_format, out);
}

#endif  // LP_DETAIL_DEFINE_COMPILED_PART

}  // namespace lp::detail
