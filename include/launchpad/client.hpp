#pragma once

#include <launchpad/detail/call/caller.hpp>
#include <launchpad/service.hpp>
#include <memory>
#include <string>

namespace lp {

namespace detail {
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

// A typed proxy to a node serving T: it has a member for every method that
// LP_SERVICE listed, with the same name, and calls the node over the wire.
//
//   long n = counter.add(1);                  // blocks for the result
//   std::future<long> f = counter.async.add(1);
//
// A node gets its clients from the lp::handle<T> arguments given to add_node.
// Copies share one connection pool; a client is safe to use from many threads.
template <class T>
class client : public detail::proxy_of<T, detail::sync_caller>::type {
  static_assert(service<T>,
                "lp::client<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
                "right after T, in T's namespace or at global scope");
  using sync_proxy = typename detail::proxy_of<T, detail::sync_caller>::type;
  using async_proxy = typename detail::proxy_of<T, detail::async_caller>::type;

 public:
  using service_type = T;

  client() = default;
  explicit client(std::shared_ptr<detail::channel> target)
      : sync_proxy(target), async(std::move(target)) {}

  // The same methods, each returning a std::future of its result.
  async_proxy async;

  // The label of the node this client calls.
  const std::string& node() const { return this->lp_target().node(); }

  // A copy of this client (sharing its connections) whose calls, sync and
  // async, give up after `deadline` with lp::deadline_exceeded. Keep the
  // copy for a client-wide default, or use it for one call:
  //   counter.with_deadline(std::chrono::milliseconds(50)).add(1);
  // Without it a call waits up to two minutes.
  client with_deadline(std::chrono::milliseconds deadline) const {
    client copy = *this;
    copy.lp_set_deadline(deadline);
    copy.async.lp_set_deadline(deadline);
    return copy;
  }
};

}  // namespace lp
