#pragma once

#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <launchpad/detail/wire/arguments.hpp>
#include <launchpad/detail/serve/batch_queue.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/service.hpp>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace lp::detail {

// A node of a running program, whatever its service type.
class node_instance {
 public:
  virtual ~node_instance() = default;
  virtual void run() = 0;
  // Decodes the positional arguments, invokes the method and writes the
  // reply that carries its result, in `format`, over `out`. Throws
  // call_failure, or whatever the method throws.
  virtual void call(std::string_view method, const arguments& args, protocol::format format,
                    written_reply& out) = 0;
  // The service's name and methods, for /lp/v1/describe.
  virtual json describe() const = 0;
};

template <class T>
struct method_entry {
  std::string_view name;
  std::size_t arity;
  std::string signature;
  // `serial` is null for a service with concurrent handlers; `queue` is the
  // node's queue for this method if it is batched.
  void (*invoke)(T&, const arguments&, protocol::format, written_reply& out, std::mutex* serial,
                 batch_queue_base* queue);
  std::unique_ptr<batch_queue_base> (*make_queue)();
  json batching;  // null, or the limits of a batched method
};

template <class Method, std::size_t I>
auto decode_argument(const arguments& args) {
  using param = std::tuple_element_t<I, typename signature<Method>::params>;
  try {
    return args.get<param>(I);
  } catch (const decode_error& e) {
    throw call_failure(400, "bad_request",
                       "argument " + std::to_string(I + 1) + " of " + std::string(Method::name) +
                           ": " + e.what());
  }
}

// One call of an unbatched method with its decoded arguments: its result,
// or std::monostate for a void method.
template <class T, class Method>
auto call_once(T& object, typename signature<Method>::params& values, std::mutex* serial) {
  std::unique_lock<std::mutex> turn;
  if (serial) turn = std::unique_lock(*serial);
  auto apply = [&](auto&... value) -> decltype(auto) {
    return (object.*Method::pointer)(std::move(value)...);
  };
  if constexpr (std::is_void_v<typename signature<Method>::result>) {
    std::apply(apply, values);
    return std::monostate{};
  } else {
    return std::apply(apply, values);
  }
}

template <class T, class Method>
void invoke(T& object, const arguments& args, protocol::format format, written_reply& out,
            std::mutex* serial, batch_queue_base* queue) {
  using traits = signature<Method>;
  if (args.size() != traits::arity)
    throw call_failure(400, "bad_request",
                       std::string(Method::name) + " takes " + std::to_string(traits::arity) +
                           " argument(s), got " + std::to_string(args.size()));
  auto values = [&]<std::size_t... I>(std::index_sequence<I...>) {
    // Braces evaluate in order, so the first bad argument is the one named.
    return typename traits::params{decode_argument<Method, I>(args)...};
  }(std::make_index_sequence<traits::arity>{});
  auto result = [&] {
    if constexpr (batched_method<Method>)
      return static_cast<batch_queue<T, Method>*>(queue)->call(object, std::move(values), serial);
    else
      return call_once<T, Method>(object, values, serial);
  }();
  if constexpr (std::is_same_v<decltype(result), std::monostate>)
    write_result(out, nullptr, format);
  else
    write_result(out, std::move(result), format);
}

template <class Method>
json batching_of() {
  if constexpr (batched_method<Method>) {
    constexpr auto limits = lp_batch_limits(lp_batch_tag<Method>{});
    return {{"max_batch", limits.max_batch}, {"max_wait_us", limits.max_wait.count()}};
  } else {
    return nullptr;
  }
}

template <class T, class Method>
std::unique_ptr<batch_queue_base> make_queue() {
  if constexpr (batched_method<Method>) return std::make_unique<batch_queue<T, Method>>();
  else return nullptr;
}

// The service's methods in LP_SERVICE order, built once per type.
template <class T>
const std::vector<method_entry<T>>& method_table() {
  static const auto table = [] {
    std::vector<method_entry<T>> entries;
    boost::hana::for_each(service_definition<T>::methods, [&](auto method) {
      using M = typename decltype(method)::type;
      entries.push_back({M::name, signature<M>::arity, signature<M>::describe(M::name),
                         &invoke<T, M>, &make_queue<T, M>, batching_of<M>()});
    });
    return entries;
  }();
  return table;
}

template <class T>
class typed_node final : public node_instance {
 public:
  explicit typed_node(std::unique_ptr<T> object) : object_(std::move(object)) {
    for (const auto& entry : method_table<T>()) queues_.push_back(entry.make_queue());
  }

  void run() override {
    if constexpr (runnable<T>) object_->run();
  }

  void call(std::string_view method, const arguments& args, protocol::format format,
            written_reply& out) override {
    const auto& table = method_table<T>();
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].name == method)
        return table[i].invoke(*object_, args, format, out,
                               concurrent_handlers<T> ? nullptr : &serial_, queues_[i].get());
    std::string known;
    for (const auto& entry : method_table<T>())
      known += (known.empty() ? "" : ", ") + std::string(entry.name);
    throw call_failure(404, "no_such_method",
                       "service " + std::string(service_definition<T>::name) +
                           " has no method '" + std::string(method) + "'; its methods: " +
                           (known.empty() ? "(none)" : known));
  }

  json describe() const override {
    json methods = json::array();
    for (const auto& entry : method_table<T>()) {
      json method = {{"name", entry.name}, {"arity", entry.arity}, {"signature", entry.signature}};
      if (!entry.batching.is_null()) method["batched"] = entry.batching;
      methods.push_back(std::move(method));
    }
    return {{"service", service_definition<T>::name}, {"methods", methods}};
  }

 private:
  std::unique_ptr<T> object_;
  std::mutex serial_;
  std::vector<std::unique_ptr<batch_queue_base>> queues_;  // by method, for batched ones
};

}  // namespace lp::detail
