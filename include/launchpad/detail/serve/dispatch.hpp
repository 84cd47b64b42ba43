#pragma once

// What a node does with a call, from the request's bytes to the reply's
// bytes, with no socket in the way: the whole path a hostile or buggy peer
// can reach (tests/fuzz drives it directly).

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/arguments.hpp>
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
LP_API int answer(node_instance& node, const std::string& label,
                  const std::string& method, const arguments& args,
                  protocol::format reply_format, written_reply& out);

// Answers a call whose body (in `format`) holds the positional arguments.
LP_API int dispatch(node_instance& node, const std::string& label,
                    const std::string& method, protocol::format format,
                    protocol::format reply_format, std::string_view body,
                    written_reply& out);

}  // namespace lp::detail
