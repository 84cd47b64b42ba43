#pragma once

#include <launchpad/detail/config.hpp>
#include <stdexcept>
#include <string>

namespace lp {

// Root of every exception the library throws. what() reads
// "[lp.<id>] <message>", where the id is stable and documented in
// docs/troubleshooting.md, so users and scripts can match on it.
class error : public std::runtime_error {
 public:
  LP_API error(const std::string& id, const std::string& message);
  const std::string& id() const noexcept { return id_; }

 private:
  std::string id_;
};

// The program graph was built wrongly: an empty or duplicate label, a handle
// from another program, ...
class graph_error : public error {
 public:
  explicit graph_error(const std::string& message) : error("graph_error", message) {}
};

// The library was used wrongly at run time: an unknown --lp_ flag,
// lp::context() outside a node, ...
class usage_error : public error {
 public:
  explicit usage_error(const std::string& message) : error("usage_error", message) {}
};

// A launch could not start or run what it was asked to: a process could not
// be started, a run directory or log file could not be written, a Slurm tool
// refused, the launcher's rendezvous could not be reached.
class launch_error : public error {
 public:
  explicit launch_error(const std::string& message) : error("launch_error", message) {}

 protected:
  launch_error(const std::string& id, const std::string& message) : error(id, message) {}
};

// A node could not listen on its address (a port in use, an address this
// host does not have).
class bind_error : public launch_error {
 public:
  explicit bind_error(const std::string& message) : launch_error("bind_error", message) {}
};

// The kernel gave no random bytes for the launch's secret.
class secret_error : public launch_error {
 public:
  explicit secret_error(const std::string& message)
      : launch_error("secret_error", message) {}
};

// The launch's TLS certificate or key cannot be used (--lp_tls_cert,
// --lp_tls_key, --lp_tls_ca): a file that cannot be read or holds no PEM, a
// certificate expired or not yet valid, a key of another certificate. The
// message names the file and the fix.
class tls_error : public launch_error {
 public:
  explicit tls_error(const std::string& message) : launch_error("tls_error", message) {}
};

// A value that does not fit the type it must become: an argument or result
// on the wire, a checkpoint's state, or lp::json read with get<T>() after
// <launchpad/json.hpp>. reason() says what was expected and what came.
class decode_error : public error {
 public:
  explicit decode_error(const std::string& reason)
      : error("decode_error", reason), reason_(reason) {}
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

// A checkpoint that cannot be restored: unreadable, corrupt, or the state of
// another service. The message names the file.
class checkpoint_error : public launch_error {
 public:
  explicit checkpoint_error(const std::string& message)
      : launch_error("checkpoint_error", message) {}
};

// A node of a launched program failed (its run() threw, its process exited
// non-zero or was killed), as a test controller's wait() reports it. what()
// names each failed node; under test_multi_threading the node's own
// exception is nested (std::rethrow_if_nested).
class node_failure : public error {
 public:
  explicit node_failure(const std::string& summary) : error("node_failure", summary) {}
};

// A call could not reach its node or got no answer: connection refused, the
// connection dropped, the program is stopping, the deadline passed.
class transport_error : public error {
 public:
  transport_error(const std::string& node, const std::string& method,
                  const std::string& message)
      : transport_error("transport_error", node, method, message) {}
  const std::string& node() const noexcept { return node_; }
  const std::string& method() const noexcept { return method_; }

 protected:
  transport_error(const std::string& id, const std::string& node,
                  const std::string& method, const std::string& message)
      : error(id, "calling " + node + "." + method + ": " + message),
        node_(node),
        method_(method) {}

 private:
  std::string node_, method_;
};

// The call's deadline passed before its reply came. The method may still
// run, or have run, on the node: retry only what is safe to repeat.
class deadline_exceeded : public transport_error {
 public:
  deadline_exceeded(const std::string& node, const std::string& method,
                    const std::string& message)
      : transport_error("deadline_exceeded", node, method, message) {}
};

// The call was refused because the program is stopping: the node no longer
// takes calls, or the launch no longer knows where it serves. Raised only
// once this process's own program is stopping too (lp::stop_requested() is
// true), so a run() that calls other nodes may simply let it end the run():
// a run() that ends by lp::stopping after a stop was asked for ends cleanly.
class stopping : public transport_error {
 public:
  stopping(const std::string& node, const std::string& method, const std::string& message)
      : transport_error("stopping", node, method, message) {}
};

// The node answered with an error: the method threw (code "remote_exception"),
// the request was bad ("bad_request"), no such method ("no_such_method"), the
// node is stopping ("stopping"). message() is the node's own text.
class remote_error : public error {
 public:
  remote_error(const std::string& node, const std::string& method,
               const std::string& code, const std::string& message, int status)
      : error("remote_error", node + "." + method + " failed (" + code + "): " + message),
        node_(node),
        method_(method),
        code_(code),
        message_(message),
        status_(status) {}
  const std::string& node() const noexcept { return node_; }
  const std::string& method() const noexcept { return method_; }
  const std::string& code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  int status() const noexcept { return status_; }

 protected:
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

// A node that answers for another (an lp::cacher) got no answer from the node
// behind it, and had none young enough to serve instead. node() is the node
// called (the cacher); message() names the node behind it, its method, and
// why it failed. code() is "upstream_failed", status() 502. The node called
// recovers by itself once the node behind answers again: retry later.
class upstream_error : public remote_error {
 public:
  explicit upstream_error(const remote_error& answer)
      : remote_error("upstream_error", answer) {}
};

}  // namespace lp
