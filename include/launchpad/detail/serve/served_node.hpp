#pragma once

#include <chrono>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/observe/call_metrics.hpp>
#include <launchpad/detail/observe/node_metrics.hpp>
#include <launchpad/detail/serve/dispatch.hpp>
#include <launchpad/detail/serve/node_gate.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// A node as its callers reach it, over HTTP or directly: the node, who it
// is, the program it belongs to, and the gate its calls pass.
struct served_node {
  node_instance& instance;
  const node_identity& identity;
  launch_state& launch;
  node_metrics& metrics;
  node_gate gate;
};

// Why a draining node refuses a call: its program stops ("stopping", which
// callers raise as lp::stopping and take as their own program's stop), or
// this node failed ("node_failed": a restart may follow, so the caller's
// program goes on).
inline std::pair<std::string_view, std::string> refusal(const served_node& node) {
  if (node.launch.failure())
    return {protocol::error::node_failed,
            "node '" + node.identity.label + "' failed and is stopping"};
  return {protocol::error::stopping,
          "node '" + node.identity.label + "' is stopping: its program stops"};
}

struct in_process_reply {
  int status;
  std::chrono::steady_clock::time_point ended;
};

// Answers a call made from this process without HTTP (direct_calls<P>): the
// same answers as over HTTP, from the arguments as the client encoded them
// (CBOR), on the caller's thread. Writes the CBOR reply over `out`; returns
// its status and when the call ended, measured from `made`. `deadline` is
// the caller's (lp::caller_deadline()).
inline in_process_reply call_in_process(
    served_node& node, const std::string& method, std::string_view args,
    written_reply& out, std::chrono::steady_clock::time_point made,
    std::chrono::steady_clock::time_point deadline =
        std::chrono::steady_clock::time_point::max()) {
  call_timer timer(node.metrics.calls_to(method), args.size(), made);
  if (!node.gate.enter(/*reply_to_write=*/false)) {
    auto [code, message] = refusal(node);
    write_error(out, code, message, node.identity.label, method, protocol::format::cbor);
    timer.status = 503;
    return {timer.status, timer.stop()};
  }
  struct leave {
    node_gate& gate;
    ~leave() { gate.left(); }
  } guard{node.gate};
  node_scope scope(node.identity, node.launch, deadline);
  timer.status = dispatch(node.instance, node.identity.label, method,
                          protocol::format::cbor, protocol::format::cbor, args, out);
  timer.reply_bytes = out.body.size();
  return {timer.status, timer.stop()};
}

}  // namespace lp::detail
