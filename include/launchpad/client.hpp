#pragma once

/// @file
/// lp::client, the typed proxy through which a node calls another.

#include <launchpad/detail/call/caller.hpp>
#include <launchpad/service.hpp>
#include <memory>
#include <string>

namespace lp {

namespace detail {
struct client_access;

// Falls back to the bare caller for a non-service so that client<T>'s own
// static_assert, not a missing-member error, is what the user reads.
template <class T, class Caller>
struct proxy_of {
  using type = Caller;
};
template <class T, class Caller>
requires service<T>
struct proxy_of<T, Caller> {
  using type = typename service_definition<T>::template proxy<Caller>;
};
}  // namespace detail

/// A typed proxy to a node serving T: it has a member for every method that
/// LP_SERVICE listed, with the same name and parameter types, and calls the
/// node over the wire.
///
/// ```cpp
/// struct Producer {
///   lp::client<Counter> counter;  // from the lp::handle<Counter> given to add_node
///   void run() {
///     long n = counter.add(1);                     // blocks for the result
///     std::future<long> f = counter.async.add(1);  // returns at once
///   }
/// };
/// ```
///
/// The compiler checks each call as it would a local one: the number of
/// arguments and their conversions, with a message that names the method
/// and the fix. A node gets its clients from the lp::handle arguments given
/// to lp::program::add_node; a test, from lp::controller::client. Copies
/// share one connection pool; a client is safe to use from many threads
/// (docs/concepts.md, "Handles and clients").
///
/// A call returns the method's result, or throws:
/// - lp::remote_error when the node answered with an error: the method
///   threw (`code()` "remote_exception"), an argument did not fit;
/// - lp::deadline_exceeded when no reply came within the deadline (two
///   minutes, or what with_deadline gave);
/// - lp::stopping when the program is stopping;
/// - lp::transport_error when the node could not be reached;
/// - lp::usage_error for a client bound to no node.
///
/// @tparam T a service (LP_SERVICE)
template <class T>
class client : public detail::proxy_of<T, detail::sync_caller>::type {
  static_assert(
      service<T>,
      "lp::client<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
      "right after T, in T's namespace or at global scope");
  using sync_proxy = typename detail::proxy_of<T, detail::sync_caller>::type;
  using async_proxy = typename detail::proxy_of<T, detail::async_caller>::type;

 public:
  /// The service the node serves.
  using service_type = T;

  /// Bound to no node: its calls throw lp::usage_error.
  client() = default;

  /// The same methods, each returning a std::future of its result:
  /// `future.get()` returns it or throws what the blocking call would.
  ///
  /// A process runs at most 64 async calls at once, each on a thread of a
  /// shared pool; further ones wait in a queue, their deadline already
  /// running (docs/concepts.md, "Handles and clients").
  async_proxy async;

  /// The label of the node this client calls.
  const std::string& node() const { return detail::call_access::target(*this).node(); }

  /// A copy of this client, sharing its connections, whose calls give up
  /// after `deadline` with lp::deadline_exceeded.
  ///
  /// The deadline counts from when each call, sync or async, is made, and
  /// covers any wait for a node that does not serve yet. Keep the copy for
  /// a client-wide default, or use it for one call:
  ///
  /// ```cpp
  /// counter.with_deadline(std::chrono::milliseconds(50)).add(1);
  /// ```
  ///
  /// Without it a call waits up to two minutes. The node learns the deadline
  /// too (lp::caller_deadline()). After it passes, the method may still run
  /// on the node.
  client with_deadline(std::chrono::milliseconds deadline) const {
    client copy = *this;
    copy.lp_deadline_ = deadline;
    copy.async.lp_deadline_ = deadline;
    return copy;
  }

 private:
  friend struct detail::client_access;
  explicit client(std::shared_ptr<detail::channel> target)
      : sync_proxy(target), async(std::move(target)) {}
};

namespace detail {
// How the library makes a client bound to a node (graph/handle_arguments.hpp
// from handles, the test controllers); user code cannot.
struct client_access {
  template <class T>
  static client<T> make(std::shared_ptr<channel> target) {
    return client<T>(std::move(target));
  }
};
}  // namespace detail

}  // namespace lp
