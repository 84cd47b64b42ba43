#pragma once

#include <launchpad/detail/serve/dispatch.hpp>
#include <launchpad/detail/util/launch_state.hpp>
#include <launchpad/detail/serve/node_gate.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// A node as its callers reach it, over HTTP or directly: the node, who it
// is, the program it belongs to, and the gate its calls pass.
struct served_node {
  node_instance& instance;
  const node_identity& identity;
  launch_state& launch;
  node_gate gate;
};

// Answers a call made from this process without HTTP (direct_calls<P>): the
// same answers as over HTTP, from the arguments as the client encoded them
// (CBOR), on the caller's thread. Writes the CBOR reply over `out` and
// returns its status.
inline int call_in_process(served_node& node, const std::string& method, std::string_view args,
                           written_reply& out) {
  if (!node.gate.enter(/*reply_to_write=*/false)) {
    write_error(out, "stopping", "node '" + node.identity.label + "' is stopping",
                node.identity.label, method, protocol::format::cbor);
    return 503;
  }
  struct leave {
    node_gate& gate;
    ~leave() { gate.left(); }
  } guard{node.gate};
  node_scope scope(node.identity, node.launch);
  return dispatch(node.instance, node.identity.label, method, protocol::format::cbor,
                  protocol::format::cbor, args, out);
}

}  // namespace lp::detail
