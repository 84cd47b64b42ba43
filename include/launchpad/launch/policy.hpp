#pragma once

// What a launch policy is, how its nodes call each other, and where the
// output of its node processes goes.
//
// A policy is a type named as lp::launch's template argument. It names its
// --lp_launch value (`flag`), its transport, and whether a program's main()
// can run it from a command line; a policy for tests also names its
// controller and that controller's options. lp::launch checks all of this at
// compile time, so a policy used in a form it cannot run is a compile error.

#include <concepts>
#include <string_view>

namespace lp {

// How calls between two nodes hosted in one process travel. Between
// processes they always go over HTTP (JSON and CBOR, docs/protocol.md).
enum class transport_kind {
  http,    // over loopback HTTP, like every other call
  direct,  // on the caller's thread, without HTTP (arguments are still copied)
};

// Where the output of a launch's node processes goes (--lp_terminal;
// process_test_options::terminal).
enum class terminal_kind {
  current,  // the launcher's own stdout and stderr, each line behind its node's label
  files,    // one log per node process
  tmux,     // one log per node process, and a tmux session with a window following each
};

struct http_transport {
  static constexpr transport_kind kind = transport_kind::http;
};
struct direct_transport {
  static constexpr transport_kind kind = transport_kind::direct;
};

template <class P>
concept launch_policy = requires {
  { P::flag } -> std::convertible_to<std::string_view>;
  { P::transport::kind } -> std::convertible_to<transport_kind>;
  { P::from_command_line } -> std::convertible_to<bool>;
};

// P, with calls between nodes of one process made directly, skipping HTTP:
// for fast tests of big programs, and colocated groups. Under any policy
// that --lp_launch picks at run time, calls between processes still go over
// HTTP.
//
//   auto running = lp::launch<lp::direct_calls<lp::test_multi_threading>>(p);
template <launch_policy P>
struct direct_calls : P {
  using transport = direct_transport;
};

}  // namespace lp
