#pragma once

#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <iterator>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/observe/node_metrics.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/serve/batch_queue.hpp>
#include <launchpad/detail/serve/method_list.hpp>
#include <launchpad/detail/wire/arguments.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/detail/wire/schema.hpp>
#include <launchpad/service.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
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
  virtual void call(std::string_view method, const arguments& args,
                    protocol::format format, written_reply& out) = 0;
  // The service's name and methods, for /lp/v1/describe (describe_service).
  virtual std::string_view service() const = 0;
  virtual const std::vector<method_info>& methods() const = 0;
  // Whether the service has lp_save and lp_restore (lp::checkpointed).
  virtual bool checkpointed() const { return false; }
  // What lp_save() returns, in CBOR, taken between calls (a service with
  // concurrent handlers, or whose run() changes the state, keeps its own
  // lock in lp_save).
  virtual std::string save() { return {}; }
  // Gives lp_restore the state save() wrote; throws decode_error for bytes
  // that are not such a state.
  virtual void restore(std::string_view) {}
  // Returns once no handler runs (for a service whose handlers take turns):
  // blocks for as long as one hangs.
  virtual void probe() {}
  // From now on each batch of a batched method is counted in `metrics`.
  virtual void count_batches(node_metrics& metrics) = 0;
};

// The index of `method` in `methods`; throws call_failure (404) naming the
// service's methods if it has none of that name.
LP_API std::size_t find_method(const std::vector<method_info>& methods,
                               std::string_view method, std::string_view service);

// Argument i of `method` does not fit its parameter: the caller's 400.
[[noreturn]] LP_API void bad_argument(std::size_t i, std::string_view method,
                                      const decode_error& e);

// A call with another number of arguments than `arity`: the caller's 400.
[[noreturn]] LP_API void bad_arity(const arguments& args, std::size_t arity,
                                   std::string_view method);

inline void check_arity(const arguments& args, std::size_t arity,
                        std::string_view method) {
  if (args.size() != arity) bad_arity(args, arity, method);
}

// Argument i of a call to `method` as a P (compiled once per parameter
// type, not per method).
template <class P>
P decode_argument(const arguments& args, std::size_t i, std::string_view method) {
  try {
    return args.get<P>(i);
  } catch (const decode_error& e) {
    bad_argument(i, method, e);
  }
}

// One call of an unbatched method with its decoded arguments: its result,
// or std::monostate for a void method.
template <class T, class Method>
auto call_once(T& object, typename signature<Method>::params& values,
               std::mutex* serial) {
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
  check_arity(args, traits::arity, Method::name);
  auto values = [&]<std::size_t... I>(std::index_sequence<I...>) {
    // Braces evaluate in order, so the first bad argument is the one named.
    return typename traits::params{
        decode_argument<std::tuple_element_t<I, typename traits::params>>(
            args, I, Method::name)...};
  }
  (std::make_index_sequence<traits::arity>{});
  auto result = [&] {
    if constexpr (batched_method<Method>)
      return static_cast<batch_queue<T, Method>*>(queue)->call(object, std::move(values),
                                                               serial);
    else
      return call_once<T, Method>(object, values, serial);
  }();
  if constexpr (std::is_same_v<decltype(result), std::monostate>)
    write_result(out, nullptr, format);
  else
    write_result(out, std::move(result), format);
}

template <class T, class Method>
std::unique_ptr<batch_queue_base> make_queue() {
  if constexpr (batched_method<Method>)
    return std::make_unique<batch_queue<T, Method>>();
  else
    return nullptr;
}

// How each of the service's methods is invoked, in LP_SERVICE order (what
// describe needs of them is service_methods<T>()).
template <class T>
struct method_table {
  using invoker = void (*)(T&, const arguments&, protocol::format, written_reply& out,
                           std::mutex* serial, batch_queue_base* queue);
  // `serial` is null for a service with concurrent handlers; `queue` is the
  // node's queue for this method if it is batched.
  std::vector<invoker> invoke;
  std::vector<std::unique_ptr<batch_queue_base> (*)()> make_queue;

  static const method_table& of_service() {
    static const method_table table = [] {
      method_table out;
      boost::hana::for_each(service_definition<T>::methods, [&](auto method) {
        using M = typename decltype(method)::type;
        if constexpr (check_method<T, M>()) {
          out.invoke.push_back(&detail::invoke<T, M>);
          out.make_queue.push_back(&detail::make_queue<T, M>);
        }
      });
      return out;
    }();
    return table;
  }
};

template <class T>
class typed_node final : public node_instance {
 public:
  explicit typed_node(std::unique_ptr<T> object) : object_(std::move(object)) {
    for (auto make : table().make_queue) queues_.push_back(make());
  }

  void run() override {
    if constexpr (runnable<T>) object_->run();
  }

  void call(std::string_view method, const arguments& args, protocol::format format,
            written_reply& out) override {
    auto i = find_method(service_methods<T>(), method, service_definition<T>::name);
    table().invoke[i](*object_, args, format, out,
                      concurrent_handlers<T> ? nullptr : &serial_, queues_[i].get());
  }

  std::string_view service() const override { return service_definition<T>::name; }
  const std::vector<method_info>& methods() const override {
    return service_methods<T>();
  }

  bool checkpointed() const override { return lp::checkpointed<T>; }

  void probe() override {
    if constexpr (!concurrent_handlers<T>) std::lock_guard turn(serial_);
  }

  std::string save() override {
    std::string bytes;
    if constexpr (lp::checkpointed<T>) {
      // The node waits for lp_save only, not for the encoding.
      auto state = [&] {
        std::unique_lock<std::mutex> turn;
        if (!concurrent_handlers<T>) turn = std::unique_lock(serial_);
        return object_->lp_save();
      }();
      cbor::write(bytes, state);
    }
    return bytes;
  }

  void restore(std::string_view bytes) override {
    if constexpr (lp::checkpointed<T>) {
      using State = std::decay_t<decltype(std::declval<const T&>().lp_save())>;
      std::size_t at = 0;
      auto state = cbor::read_as<State>(bytes, at, protocol::max_depth);
      if (at != bytes.size()) throw decode_error("bytes after the saved state");
      std::lock_guard turn(serial_);
      object_->lp_restore(std::move(state));
    }
  }

  void count_batches(node_metrics& metrics) override {
    for (std::size_t i = 0; i < queues_.size(); ++i)
      if (queues_[i]) queues_[i]->calls = &metrics.method(i);
  }

 private:
  static const method_table<T>& table() { return method_table<T>::of_service(); }

  std::unique_ptr<T> object_;
  std::mutex serial_;
  std::vector<std::unique_ptr<batch_queue_base>> queues_;  // by method, for batched ones
};

}  // namespace lp::detail
