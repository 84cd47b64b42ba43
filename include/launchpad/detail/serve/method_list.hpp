#pragma once

// What describe and the method lookup need of a service's methods: their
// names, signatures, types and batching, without invoking them, so that a
// service served by Python (LP_PYTHON) is described as a C++ one is.

#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <iterator>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/serve/batch_queue.hpp>
#include <launchpad/detail/wire/schema.hpp>
#include <launchpad/service.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// What describe and the method lookup need of a method: the same for every
// service type, so that code is compiled once.
struct method_info {
  std::string_view name;
  std::size_t arity;
  std::string signature;
  std::optional<batch_limits> batching;  // for a batched method
  // The result's schema, then each parameter's (a batched method's: one
  // caller's element); empty for a method LP_SERVICE refused.
  std::span<const type_schema* const> schemas;
};

// "result name(parameters)" from the type spellings of the result and then
// of each parameter.
LP_API std::string signature_text(std::string_view name, const std::string_view* types,
                                  std::size_t count);

// Appends a method's entry to `methods` (its signature from the spellings
// of its result and parameters, signature_text).
LP_API void add_method(std::vector<method_info>& methods, std::string_view name,
                       std::size_t arity, const std::string_view* types,
                       std::size_t count, std::optional<batch_limits> batching,
                       std::span<const type_schema* const> schemas);

// The service's name and methods, for /lp/v1/describe.
LP_API json describe_service(std::string_view service,
                             const std::vector<method_info>& methods);

template <class Method>
std::optional<batch_limits> batching_of() {
  if constexpr (batched_method<Method>)
    return lp_batch_limits(lp_batch_tag<Method>{});
  else
    return std::nullopt;
}

// The service's methods in LP_SERVICE order, built once per type.
template <class T>
const std::vector<method_info>& service_methods() {
  static const std::vector<method_info> methods = [] {
    std::vector<method_info> out;
    boost::hana::for_each(service_definition<T>::methods, [&](auto method) {
      using M = typename decltype(method)::type;
      const auto& types = signature<M>::types;
      // A method LP_SERVICE refused (its message is already out) is not
      // instantiated, so that its message stands alone.
      std::span<const type_schema* const> schemas;
      if constexpr (check_method<T, M>())
        schemas = signature_schemas<typename signature<M>::result,
                                    typename signature<M>::params>::value;
      add_method(out, M::name, signature<M>::arity, types, std::size(types),
                 batching_of<M>(), schemas);
    });
    return out;
  }();
  return methods;
}

}  // namespace lp::detail
