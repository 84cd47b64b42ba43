#pragma once

// dispatch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/serve/dispatch.hpp>

namespace lp::detail {

LP_API int answer(node_instance& node, const std::string& label,
                  const std::string& method, const arguments& args,
                  protocol::format reply_format, written_reply& out) {
  auto fail = [&](int status, std::string_view code, const std::string& message) {
    write_error(out, code, message, label, method, reply_format);
    return status;
  };
  if (!args.is_array())
    return fail(
        400, protocol::error::bad_request,
        std::string("the body must be an array of the positional arguments, got ") +
            args.type_name());
  try {
    node.call(method, args, reply_format, out);
    return 200;
  } catch (const call_failure& e) {
    return fail(e.status, e.code, e.what());
  } catch (const std::exception& e) {
    return fail(500, protocol::error::remote_exception, e.what());
  } catch (...) {
    return fail(500, protocol::error::remote_exception,
                "an exception not derived from std::exception");
  }
}

LP_API int dispatch(node_instance& node, const std::string& label,
                    const std::string& method, protocol::format format,
                    protocol::format reply_format, std::string_view body,
                    written_reply& out) {
  // Futures the method makes go ahead of the call pool's queue (call_pool()).
  handler_scope handling;
  std::optional<arguments> args;
  try {
    args.emplace(body, format);
  } catch (const std::exception& e) {
    write_error(out, protocol::error::bad_request,
                std::string("the body is not valid ") +
                    (format == protocol::format::cbor ? "CBOR" : "JSON") + ": " +
                    e.what(),
                label, method, reply_format);
    return 400;
  }
  return answer(node, label, method, *args, reply_format, out);
}

}  // namespace lp::detail
