#pragma once

/// @file
/// The exceptions the library throws: lp::error and its subclasses.
///
/// Each has a stable id, the first word of its what() in brackets, which
/// users and scripts can match on: `[lp.graph_error] node 'x' ...`.
/// docs/troubleshooting.md says, for each id, when it comes and what to do.
///
/// ```text
/// lp::error
/// +-- graph_error, usage_error, decode_error, node_failure
/// +-- launch_error: bind_error, secret_error, tls_error, checkpoint_error
/// +-- transport_error: deadline_exceeded, stopping
/// +-- remote_error: upstream_error
/// ```

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <stdexcept>
#include <string>

namespace lp {

/// The root of every exception the library throws.
///
/// what() reads `[lp.<id>] <message>`, where the id is stable and
/// documented in docs/troubleshooting.md, so that users and scripts can
/// match on it:
///
/// ```cpp
/// try {
///   counter.add(1);
/// } catch (const lp::deadline_exceeded& e) {  // a subclass, caught by type
///   retry_later();
/// } catch (const lp::error& e) {
///   std::cerr << e.what() << '\n';  // [lp.transport_error] calling counter.add: ...
///   log_failure(e.id());            // "transport_error"
/// }
/// ```
class error : public std::runtime_error {
 public:
  /// An error of this id and message. what() reads `[lp.<id>] <message>`.
  /// @param id stable, one word: the class's name for the library's own
  /// @param message what happened and what to do
  LP_API error(const std::string& id, const std::string& message);
  /// The stable id: "graph_error", "deadline_exceeded", ...
  const std::string& id() const noexcept { return id_; }

 private:
  std::string id_;
};

/// The program graph was built wrongly (id `graph_error`).
///
/// An empty, malformed or duplicate label, a handle from another program, a
/// node reserved and never defined, a bad group setting. Thrown by the
/// lp::program and lp::node_group call that got it; one that main() lets
/// escape ends the program with exit status 1 and
/// `[lp] the program could not start: ...`.
class graph_error : public error {
 public:
  /// @param message what is wrong with the graph, naming the node or group
  explicit graph_error(const std::string& message) : error("graph_error", message) {}
};

/// The library was used wrongly at run time (id `usage_error`).
///
/// An unknown `--lp_` flag (lp::launch then exits with status 2),
/// lp::context() outside a node, a call through a client bound to no node,
/// a bad metric name, an lp::tensor whose values do not fill its shape.
class usage_error : public error {
 public:
  /// @param message the misuse, and what to do instead
  explicit usage_error(const std::string& message) : error("usage_error", message) {}
};

/// A launch could not start or run what it was asked to (id `launch_error`).
///
/// A process could not be started, a run directory or log file could not
/// be written, a Slurm tool refused, the launcher's rendezvous could not be
/// reached. Its subclasses name the more particular causes.
class launch_error : public error {
 public:
  /// @param message what could not be done, and why
  explicit launch_error(const std::string& message) : error("launch_error", message) {}

 protected:
  /// For the subclasses, which give their own id.
  launch_error(const std::string& id, const std::string& message) : error(id, message) {}
};

/// A node could not listen on its address (id `bind_error`): a port in use,
/// an address this host does not have.
class bind_error : public launch_error {
 public:
  /// @param message the address, and why it could not be bound
  explicit bind_error(const std::string& message) : launch_error("bind_error", message) {}
};

/// The kernel gave no random bytes for the launch's secret (id
/// `secret_error`).
class secret_error : public launch_error {
 public:
  /// @param message why getrandom failed
  explicit secret_error(const std::string& message)
      : launch_error("secret_error", message) {}
};

/// The launch's TLS certificate or key cannot be used (id `tls_error`).
///
/// One of `--lp_tls_cert`, `--lp_tls_key`, `--lp_tls_ca` names a file that
/// cannot be read or holds no PEM, a certificate expired or not yet valid,
/// or a key of another certificate. The message names the file and the fix
/// (docs/protocol.md, "Encryption").
class tls_error : public launch_error {
 public:
  /// @param message the file, what is wrong with it, and the fix
  explicit tls_error(const std::string& message) : launch_error("tls_error", message) {}
};

/// A value that does not fit the type it must become (id `decode_error`).
///
/// An argument or result on the wire, a checkpoint's state, or an lp::json
/// read with `get<T>()` after `#include <launchpad/json.hpp>`. reason() says
/// what was expected and what came.
class decode_error : public error {
 public:
  /// @param reason what was expected, and what came instead
  explicit decode_error(const std::string& reason)
      : error("decode_error", reason), reason_(reason) {}
  /// What was expected and what came, without the id.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

/// A checkpoint that cannot be restored (id `checkpoint_error`): unreadable,
/// corrupt, or the state of another service. The message names the file
/// (docs/launching.md, "Fault tolerance").
class checkpoint_error : public launch_error {
 public:
  /// @param message the file, and what is wrong with it
  explicit checkpoint_error(const std::string& message)
      : launch_error("checkpoint_error", message) {}
};

/// A node of a launched program failed (id `node_failure`), as
/// lp::controller::wait() reports it.
///
/// A node failed when its run() threw or its process exited non-zero or was
/// killed, more often than its group's restarts allow. what() names each
/// failed node; under lp::test_multi_threading the node's own exception is
/// nested in it:
///
/// ```cpp
/// try {
///   running.wait();
/// } catch (const lp::node_failure& e) {
///   try { std::rethrow_if_nested(e); } catch (const my_error& cause) { ... }
/// }
/// ```
class node_failure : public error {
 public:
  /// @param summary each failed node, one per line (lp::controller::summary())
  explicit node_failure(const std::string& summary) : error("node_failure", summary) {}
};

/// A call could not reach its node or got no answer (id `transport_error`).
///
/// The connection was refused or dropped, the program is stopping, the
/// deadline passed (lp::deadline_exceeded), the node never served. The
/// method may or may not have run: retry only what is safe to repeat.
/// what() reads `calling <node>.<method>: <message>`.
class transport_error : public error {
 public:
  /// @param node the label of the node called
  /// @param method the method called
  /// @param message what happened to the call
  transport_error(const std::string& node, const std::string& method,
                  const std::string& message)
      : transport_error("transport_error", node, method, message) {}
  /// The label of the node called.
  const std::string& node() const noexcept { return node_; }
  /// The method called.
  const std::string& method() const noexcept { return method_; }

 protected:
  /// For the subclasses, which give their own id.
  transport_error(const std::string& id, const std::string& node,
                  const std::string& method, const std::string& message)
      : error(id, "calling " + node + "." + method + ": " + message),
        node_(node),
        method_(method) {}

 private:
  std::string node_, method_;
};

/// The call's deadline passed before its reply came (id
/// `deadline_exceeded`).
///
/// The deadline is two minutes, or what lp::client::with_deadline gave. The
/// method may still run, or have run, on the node: retry only what is safe
/// to repeat. A method that waits and gives up at lp::caller_deadline()
/// reaches its caller as this exception too.
class deadline_exceeded : public transport_error {
 public:
  /// @param node the label of the node called
  /// @param method the method called
  /// @param message how long the call waited
  deadline_exceeded(const std::string& node, const std::string& method,
                    const std::string& message)
      : transport_error(detail::protocol::error::deadline_exceeded, node, method,
                        message) {}
};

/// The call was refused because the program is stopping (id `stopping`).
///
/// The node no longer takes calls, or the launch no longer knows where it
/// serves. Raised only once this process's own program is stopping too
/// (lp::stop_requested() is true), so a run() that calls other nodes may
/// simply let it escape: a run() that ends by lp::stopping after a stop was
/// asked for ends cleanly, and is no failure.
class stopping : public transport_error {
 public:
  /// @param node the label of the node called
  /// @param method the method called
  /// @param message why the call was refused
  stopping(const std::string& node, const std::string& method, const std::string& message)
      : transport_error(detail::protocol::error::stopping, node, method, message) {}
};

/// The node answered with an error (id `remote_error`).
///
/// code() says which, as the wire protocol's error reply has it
/// (docs/protocol.md, "Errors"): `remote_exception` (the method threw, and
/// message() is its what()), `bad_request` (an argument that does not fit
/// its parameter), `no_such_method`, `unauthenticated`, `node_failed`,
/// `payload_too_large`, ... A refusal for stopping comes as lp::stopping, a
/// method that gave up at the deadline as lp::deadline_exceeded, and a
/// cacher's failure as lp::upstream_error.
///
/// ```cpp
/// try {
///   counter.add(-1);
/// } catch (const lp::remote_error& e) {
///   if (e.code() == "remote_exception") std::cerr << e.message();  // add's what()
/// }
/// ```
class remote_error : public error {
 public:
  /// @param node the label of the node that answered
  /// @param method the method called
  /// @param code the reply's error code, such as "remote_exception"
  /// @param message the node's own text
  /// @param status the reply's HTTP status
  remote_error(const std::string& node, const std::string& method,
               const std::string& code, const std::string& message, int status)
      : error("remote_error", node + "." + method + " failed (" + code + "): " + message),
        node_(node),
        method_(method),
        code_(code),
        message_(message),
        status_(status) {}
  /// The label of the node that answered.
  const std::string& node() const noexcept { return node_; }
  /// The method called.
  const std::string& method() const noexcept { return method_; }
  /// The reply's error code: "remote_exception", "bad_request", ...
  const std::string& code() const noexcept { return code_; }
  /// The node's own text: for "remote_exception", the method's what().
  const std::string& message() const noexcept { return message_; }
  /// The reply's HTTP status: 500 for "remote_exception", 400 for
  /// "bad_request", ...
  int status() const noexcept { return status_; }

 protected:
  /// The same answer under another id, for the subclasses.
  remote_error(const std::string& id, const remote_error& answer)
      : error(id, answer.node() + "." + answer.method() + " failed (" + answer.code() +
                      "): " + answer.message()),
        node_(answer.node_),
        method_(answer.method_),
        code_(answer.code_),
        message_(answer.message_),
        status_(answer.status_) {}

 private:
  std::string node_, method_, code_, message_;
  int status_;
};

/// A node that answers for another got no answer from the node behind it
/// (id `upstream_error`).
///
/// An lp::cacher had no answer young enough to serve, and asking the node
/// behind it failed. node() is the node called (the cacher); message()
/// names the node behind it, its method, and why it failed. code() is
/// "upstream_failed", status() 502. The cacher recovers by itself once the
/// node behind answers again: retry later (docs/cacher.md).
class upstream_error : public remote_error {
 public:
  /// @param answer the cacher's error reply
  explicit upstream_error(const remote_error& answer)
      : remote_error("upstream_error", answer) {}
};

}  // namespace lp
