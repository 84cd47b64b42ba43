#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <launchpad/detail/channel.hpp>
#include <launchpad/detail/decode.hpp>
#include <launchpad/detail/encode.hpp>
#include <launchpad/detail/signature.hpp>
#include <launchpad/detail/thread_pool.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <string>
#include <tuple>
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
  template <class Method, class... Args>
  static json lp_encode(Args&&... args) {
    // Converting into the parameter types first gives the same conversions
    // as a local call, before anything is sent.
    typename signature<Method>::params values(std::forward<Args>(args)...);
    json array = json::array();
    std::apply([&](const auto&... value) { (array.push_back(to_wire(value)), ...); }, values);
    return array;
  }

  template <class Method>
  static typename signature<Method>::result lp_decode(const channel& target, json&& reply) {
    using result = typename signature<Method>::result;
    if constexpr (!std::is_void_v<result>) {
      try {
        return from_wire<result>(reply);
      } catch (const decode_error& e) {
        throw transport_error(target.node(), std::string(Method::name),
                              std::string("the node's reply does not fit the result type: ") +
                                  e.what());
      }
    }
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
      auto& target = lp_target();
      return lp_decode<Method>(
          target, target.call(std::string(Method::name),
                              lp_encode<Method>(std::forward<Args>(args)...), lp_deadline_));
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
      auto task = std::make_shared<std::packaged_task<typename signature<Method>::result()>>(
          [target, deadline = lp_deadline_,
           encoded = lp_encode<Method>(std::forward<Args>(args)...)] {
            return lp_decode<Method>(*target,
                                     target->call(std::string(Method::name), encoded, deadline));
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
