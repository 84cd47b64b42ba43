#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/detail/reflect/call_checks.hpp>
#include <launchpad/detail/reflect/proxy.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp {
template <class T>
class client;
}  // namespace lp

namespace lp::detail {

struct call_access;

// What every client proxy holds: the channel to the node and its calls'
// deadline. The proxy LP_SERVICE writes derives from sync_caller
// (client.add(1) returns long) or async_caller (client.async.add(1) returns
// std::future<long>); its members hand each call to call_access. Nothing
// here is reachable from a user's code: only lp::client (which makes and
// copies proxies) and call_access see inside.
class caller {
 public:
  caller() = default;

 private:
  template <class>
  friend class ::lp::client;
  friend struct call_access;
  explicit caller(std::shared_ptr<channel> target) : lp_channel_(std::move(target)) {}

  std::shared_ptr<channel> lp_channel_;
  std::chrono::milliseconds lp_deadline_ = default_deadline;
};

class sync_caller : public caller {
  using caller::caller;
};

class async_caller : public caller {
  using caller::caller;
};

// What a proxy's member for Method returns: the result, or its future.
template <class Caller, class Method>
struct call_result_of {
  using type = typename signature<Method>::result;
};
template <class Method>
struct call_result_of<async_caller, Method> {
  using type = std::future<typename signature<Method>::result>;
};

// Every call of every client goes through here. The per-method members
// LP_SERVICE writes are thin thunks onto these; what does not depend on the
// method (the deadline, the pool, the channel) is compiled once per result
// type or once only.
struct call_access {
  // The arguments live until a blocking call returns, so the body may refer
  // to their large arrays rather than copy them. One body per method and
  // thread: a direct call runs the node's method on this thread, and a call
  // that method makes must not write over the body of the call running it.
  // A run() waiting for the call is not hung: the call has its deadline.
  template <class Method, class... A>
  static typename signature<Method>::result call_sync(const caller& from, A&&... args) {
    library_wait waiting;
    auto& body = cbor::gathered::of_this_thread<Method>();
    encode<typename signature<Method>::params>(body, std::index_sequence_for<A...>{},
                                               std::forward<A>(args)...);
    return finish<typename signature<Method>::result>(
        target(from), std::string(Method::name), body.pieces(), body.arrays(),
        call_deadline::from_now(from.lp_deadline_));
  }

  // The arguments are encoded here, on the caller's thread, so the future
  // never refers to the caller's variables; the deadline starts here too,
  // so a call that waits for a pool thread waits within it.
  template <class Method, class... A>
  static std::future<typename signature<Method>::result> call_async(const caller& from,
                                                                    A&&... args) {
    sign_of_life();
    auto deadline = call_deadline::from_now(from.lp_deadline_);
    target(from);
    cbor::gathered body(/*borrows=*/false);
    encode<typename signature<Method>::params>(body, std::index_sequence_for<A...>{},
                                               std::forward<A>(args)...);
    return start<typename signature<Method>::result>(
        from.lp_channel_, std::string(Method::name), std::move(body), deadline);
  }

  static channel& target(const caller& from) {
    if (!from.lp_channel_)
      throw usage_error(
          "this lp::client is not bound to a node; clients are made from lp::handle "
          "arguments of add_node, or by a test controller's client(handle)");
    return *from.lp_channel_;
  }

 private:
  // The arguments as the body of a call: a CBOR array, written over `out`
  // (a string, or a gathered body that may refer to the arguments).
  template <class Params, class Out, std::size_t... I, class... A>
  static void encode(Out& out, std::index_sequence<I...>, A&&... args) {
    out.clear();
    cbor::head(cbor::bytes_of(out), 4, sizeof...(A));
    (write_argument<std::tuple_element_t<I, Params>>(out, std::forward<A>(args)), ...);
  }

  // An argument of its parameter's type is written as it is; any other is
  // converted first, as a local call would convert it.
  template <class Param, class Out, class Arg>
  static void write_argument(Out& out, Arg&& arg) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Arg>, Param>) {
      cbor::write(out, arg);
    } else {
      Param converted(std::forward<Arg>(arg));
      cbor::write(cbor::bytes_of(out), converted);  // copied: `converted` dies here
    }
  }

  // The round trip of an async call runs on the shared call pool: no
  // thread per call, at most call_pool_busy in flight, the others queued
  // (util/thread_pool.hpp says how nested calls avoid deadlock). A future
  // nobody waits for ends with its call, at the latest when the deadline
  // passes; one whose deadline passed while it waited for a pool thread is
  // not sent at all.
  template <class R>
  static std::future<R> start(std::shared_ptr<channel> target, std::string method,
                              cbor::gathered body, call_deadline deadline) {
    auto task = std::make_shared<std::packaged_task<R()>>(
        [target = std::move(target), method = std::move(method), body = std::move(body),
         deadline]() mutable {
          if (std::chrono::steady_clock::now() >= deadline.at)
            throw expired_call(
                target->node(), method, deadline.length,
                " (the call waited that long for a thread of the call pool, and "
                "was not sent: at most 64 futures' calls run at once; give it a longer "
                "deadline with with_deadline, or keep fewer futures outstanding)");
          return finish<R>(*target, method, body.pieces(), body.arrays(), deadline);
        });
    auto future = task->get_future();
    if (handlers_on_this_thread() > 0)
      call_pool().enqueue_urgent([task] { (*task)(); });
    else
      call_pool().enqueue([task] { (*task)(); });
    return future;
  }

  template <class R>
  static R finish(channel& target, const std::string& method,
                  std::span<const std::string_view> args,
                  std::span<const cbor::bulk_array> arrays,
                  const call_deadline& deadline) {
    try {
      if constexpr (placeable_result<R>) {
        placed_vector<R> sink;
        auto reply = target.call(method, args, arrays, deadline, &sink);
        if (reply.placed) return std::move(sink.value);
        return read_result<R>(target.node(), method, reply);
      } else {
        return read_result<R>(target.node(), method,
                              target.call(method, args, arrays, deadline, nullptr));
      }
    } catch (const remote_error& refusal) {
      rethrow_for_caller(refusal);
    }
  }

  // A node that refuses because it is stopping says that the program stops:
  // so does the caller's part of it, before the caller hears of it as
  // lp::stopping (its promise). A method that gave up waiting at the
  // caller's deadline (lp::caller_deadline()) may answer before the
  // caller's own clock runs out: the same lp::deadline_exceeded either way.
  // Any other refusal goes on as it came.
  [[noreturn]] static void rethrow_for_caller(const remote_error& refusal) {
    if (refusal.status() == 503 && refusal.code() == protocol::error::stopping) {
      stop_this_threads_program();
      throw stopping(refusal.node(), refusal.method(), refusal.message());
    }
    if (refusal.status() == 504 && refusal.code() == protocol::error::deadline_exceeded)
      throw deadline_exceeded(refusal.node(), refusal.method(), refusal.message());
    // A node with no answer from the node behind it (lp::cacher): a caller
    // may catch it apart, and retry later.
    if (refusal.code() == protocol::error::upstream_failed) throw upstream_error(refusal);
    throw;
  }
};

// The thunk of the proxy members' calls that fit (reflect/proxy.hpp).
template <class Method, class Caller, class... A>
call_result<Caller, Method> proxy_call(const Caller& from, A&&... args) {
  if constexpr (std::is_same_v<Caller, async_caller>)
    return call_access::call_async<Method>(from, std::forward<A>(args)...);
  else
    return call_access::call_sync<Method>(from, std::forward<A>(args)...);
}

}  // namespace lp::detail
