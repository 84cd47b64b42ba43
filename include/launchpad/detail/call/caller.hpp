#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

// The base of every client proxy: owns the channel to the node and turns a
// call into arguments on the wire and back. The proxy that LP_SERVICE writes
// derives from sync_caller (client.add(1) returns long) or async_caller
// (client.async.add(1) returns std::future<long>).
class caller {
 public:
  caller() = default;
  explicit caller(std::shared_ptr<channel> target) : lp_channel_(std::move(target)) {}

  void lp_set_deadline(std::chrono::milliseconds deadline) { lp_deadline_ = deadline; }

 protected:
  // The arguments as the body of a call: a CBOR array, written over `out`
  // (a string, or a gathered body that may refer to the arguments).
  template <class Method, class Out, class... Args>
  static void lp_encode(Out& out, Args&&... args) {
    out.clear();
    cbor::head(cbor::bytes_of(out), 4, signature<Method>::arity);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (lp_write<std::tuple_element_t<I, typename signature<Method>::params>>(
           out, std::forward<Args>(args)),
       ...);
    }(std::index_sequence_for<Args...>{});
  }

  // An argument of its parameter's type is written as it is; any other is
  // converted first, as a local call would convert it.
  template <class Param, class Out, class Arg>
  static void lp_write(Out& out, Arg&& arg) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Arg>, Param>) {
      cbor::write(out, arg);
    } else {
      Param converted(std::forward<Arg>(arg));
      cbor::write(cbor::bytes_of(out), converted);  // copied: `converted` dies here
    }
  }

  template <class Method>
  static typename signature<Method>::result lp_call(channel& target,
                                                    std::span<const std::string_view> args,
                                                    std::chrono::milliseconds deadline) {
    std::string method(Method::name);
    return read_result<typename signature<Method>::result>(
        target.node(), method, target.call(method, args, deadline));
  }

  channel& lp_target() const {
    if (!lp_channel_)
      throw usage_error(
          "this lp::client is not bound to a node; clients are made from lp::handle "
          "arguments of add_node, or by a test controller's client(handle)");
    return *lp_channel_;
  }

  std::shared_ptr<channel> lp_channel_;
  std::chrono::milliseconds lp_deadline_ = default_deadline;
};

class sync_caller : public caller {
 public:
  using caller::caller;

 protected:
  template <class Method>
  using result = typename signature<Method>::result;

  template <class Method, class... Args>
  result<Method> lp_invoke(Args&&... args) const {
    if constexpr (signature<Method>::template accepts<Args...> &&
                  signature<Method>::arity == sizeof...(Args)) {
      // The arguments live until the call returns, so the body may refer to
      // their large arrays rather than copy them.
      struct request_body {};
      auto& body = cbor::gathered::of_this_thread<request_body>();
      lp_encode<Method>(body, std::forward<Args>(args)...);
      return lp_call<Method>(lp_target(), body.pieces(), lp_deadline_);
    } else {
      throw usage_error("unreachable: the call was rejected at compile time");
    }
  }
};

class async_caller : public caller {
 public:
  using caller::caller;

 protected:
  template <class Method>
  using result = std::future<typename signature<Method>::result>;

  // The arguments are encoded here, on the caller's thread, so the future
  // never refers to the caller's variables. The round trip runs on the
  // shared call pool: no thread per call. A future nobody waits for ends
  // with its call, at the latest when the deadline passes.
  template <class Method, class... Args>
  result<Method> lp_invoke(Args&&... args) const {
    if constexpr (signature<Method>::template accepts<Args...> &&
                  signature<Method>::arity == sizeof...(Args)) {
      auto target = lp_channel_;
      lp_target();
      std::string body;
      lp_encode<Method>(body, std::forward<Args>(args)...);
      auto task = std::make_shared<std::packaged_task<typename signature<Method>::result()>>(
          [target, deadline = lp_deadline_, body = std::move(body)] {
            std::string_view whole = body;
            return lp_call<Method>(*target, {&whole, 1}, deadline);
          });
      auto future = task->get_future();
      call_pool().enqueue([task] { (*task)(); });
      return future;
    } else {
      throw usage_error("unreachable: the call was rejected at compile time");
    }
  }
};

}  // namespace lp::detail
