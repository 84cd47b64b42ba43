#pragma once

/// @file
/// What a launch policy is (lp::launch_policy), how its nodes call each other
/// (lp::transport_kind, lp::direct_calls), and where the output of its node
/// processes goes (lp::terminal_kind).

#include <concepts>
#include <string_view>

namespace lp {

/// How calls between two nodes hosted in one process travel. Between
/// processes they always go over HTTP (JSON and CBOR, docs/protocol.md).
enum class transport_kind {
  http,    ///< over loopback HTTP, like every other call
  direct,  ///< on the caller's thread, without HTTP (arguments are still copied)
};

/// Where the output of a launch's node processes goes: `--lp_terminal`, and
/// lp::process_test_options::terminal (docs/launching.md, "Output").
enum class terminal_kind {
  current,  ///< the launcher's own stdout and stderr, each line behind its node's label
  files,    ///< one log per node process, in the run directory
  tmux,     ///< one log per node process, and a tmux session with a window following each
};

/// The transport of every policy but lp::direct_calls: calls within a
/// process go over loopback HTTP too.
struct http_transport {
  static constexpr transport_kind kind = transport_kind::http;  ///< HTTP
};
/// The transport of lp::direct_calls: calls within a process are direct.
struct direct_transport {
  static constexpr transport_kind kind = transport_kind::direct;  ///< direct
};

/// A launch policy: a type named as lp::launch's template argument.
///
/// It names its `--lp_launch` value (`flag`), its transport (lp::http_transport
/// or lp::direct_transport), and whether a program's main() can run it from
/// a command line (`from_command_line`); a policy for tests also names its
/// `controller` and that controller's `options`. lp::launch checks all of
/// this at compile time, so a policy used in a form it cannot run is a
/// compile error that says what to write.
template <class P>
concept launch_policy = requires {
  { P::flag } -> std::convertible_to<std::string_view>;
  { P::transport::kind } -> std::convertible_to<transport_kind>;
  { P::from_command_line } -> std::convertible_to<bool>;
};

/// P, with calls between nodes of one process made directly, skipping HTTP:
/// for fast tests of big programs, and colocated groups.
///
/// ```cpp
/// auto running = lp::launch<lp::direct_calls<lp::test_multi_threading>>(p);
/// ```
///
/// A client then calls a node of its own process on the caller's thread
/// (about 1 us for a small call, against 80-220 us over loopback HTTP).
/// Arguments and results are still encoded and decoded, so a method sees
/// copies and every error is the same; only a deadline cannot cut a direct
/// call short (docs/launching.md, "test_multi_threading"). Under any policy
/// that `--lp_launch` picks at run time, calls between processes still go
/// over HTTP.
template <launch_policy P>
struct direct_calls : P {
  using transport = direct_transport;  ///< calls within a process are direct
};

}  // namespace lp
