#pragma once

#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <launchpad/detail/decode.hpp>
#include <launchpad/detail/signature.hpp>
#include <launchpad/service.hpp>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace lp::detail {

// A call the node refuses before running any user code: it becomes an HTTP
// status and a stable error code on the wire (see docs/protocol.md).
struct call_failure : std::runtime_error {
  call_failure(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status(status), code(std::move(code)) {}
  int status;
  std::string code;
};

// A node of a running program, whatever its service type.
class node_instance {
 public:
  virtual ~node_instance() = default;
  virtual void run() = 0;
  // Decodes the positional arguments, invokes the method and encodes its
  // result. Throws call_failure, or whatever the method throws.
  virtual json call(std::string_view method, const json& args) = 0;
  // The service's name and methods, for /lp/v1/describe.
  virtual json describe() const = 0;
};

template <class T>
struct method_entry {
  std::string_view name;
  std::size_t arity;
  std::string signature;
  json (*invoke)(T&, const json&, std::mutex*);
};

template <class Method, std::size_t I>
auto decode_argument(const json& args) {
  using param = std::tuple_element_t<I, typename signature<Method>::params>;
  try {
    return from_wire<param>(args[I]);
  } catch (const decode_error& e) {
    throw call_failure(400, "bad_request",
                       "argument " + std::to_string(I + 1) + " of " + std::string(Method::name) +
                           ": " + e.what());
  }
}

template <class T, class Method>
json invoke(T& object, const json& args, std::mutex* serial) {
  using traits = signature<Method>;
  if (args.size() != traits::arity)
    throw call_failure(400, "bad_request",
                       std::string(Method::name) + " takes " + std::to_string(traits::arity) +
                           " argument(s), got " + std::to_string(args.size()));
  auto values = [&]<std::size_t... I>(std::index_sequence<I...>) {
    // Braces evaluate in order, so the first bad argument is the one named.
    return typename traits::params{decode_argument<Method, I>(args)...};
  }(std::make_index_sequence<traits::arity>{});
  std::unique_lock<std::mutex> turn;
  if (serial) turn = std::unique_lock(*serial);
  auto apply = [&](auto&... value) -> decltype(auto) {
    return (object.*Method::pointer)(std::move(value)...);
  };
  if constexpr (std::is_void_v<typename traits::result>) {
    std::apply(apply, values);
    return nullptr;
  } else {
    return json(std::apply(apply, values));
  }
}

// The service's methods in LP_SERVICE order, built once per type.
template <class T>
const std::vector<method_entry<T>>& method_table() {
  static const auto table = [] {
    std::vector<method_entry<T>> entries;
    boost::hana::for_each(service_definition<T>::methods, [&](auto method) {
      using M = typename decltype(method)::type;
      entries.push_back({M::name, signature<M>::arity, signature<M>::describe(M::name),
                         &invoke<T, M>});
    });
    return entries;
  }();
  return table;
}

template <class T>
class typed_node final : public node_instance {
 public:
  explicit typed_node(std::unique_ptr<T> object) : object_(std::move(object)) {}

  void run() override {
    if constexpr (runnable<T>) object_->run();
  }

  json call(std::string_view method, const json& args) override {
    for (const auto& entry : method_table<T>())
      if (entry.name == method)
        return entry.invoke(*object_, args, concurrent_handlers<T> ? nullptr : &serial_);
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
    for (const auto& entry : method_table<T>())
      methods.push_back(
          {{"name", entry.name}, {"arity", entry.arity}, {"signature", entry.signature}});
    return {{"service", service_definition<T>::name}, {"methods", methods}};
  }

 private:
  std::unique_ptr<T> object_;
  std::mutex serial_;
};

}  // namespace lp::detail
