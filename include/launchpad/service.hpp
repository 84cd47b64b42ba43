#pragma once

// LP_SERVICE(T, methods...) makes the struct T a service: a node of a program
// that other nodes call through lp::client<T>. Write it right after T, in T's
// namespace (or at global scope), before any lp::client<T> is used:
//
//   struct Counter { long add(long x) { return total += x; } long total = 0; };
//   LP_SERVICE(Counter, add);
//
// It builds, at compile time, the table of T's remote methods (a Boost.Hana
// tuple of method descriptors) and the proxy that gives lp::client<T> members
// of the same names. A struct with a `void run()` and no remote methods is
// written LP_SERVICE(T). For a class template, name an alias:
// `using IntBox = Box<int>; LP_SERVICE(IntBox, get);`.

#include <boost/hana/tuple.hpp>
#include <chrono>
#include <cstddef>
#include <boost/hana/type.hpp>
#include <launchpad/detail/reflect/preprocessor.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

// LP_SERVICE declares `lp_service_lookup(lp_service_tag<T>)` where it stands.
// Argument-dependent lookup finds it in T's namespace, or, because this tag
// lives in the global namespace, at global scope: so the macro works in
// either place, unlike a specialization of a template of namespace lp.
template <class T>
struct lp_service_tag {};

namespace lp {

namespace detail {
template <class T>
using definition_of = decltype(lp_service_lookup(lp_service_tag<T>{}));
}  // namespace detail

template <class T>
concept service = requires {
  lp_service_lookup(lp_service_tag<T>{});
  requires std::is_same_v<typename detail::definition_of<T>::service_type, T>;
};

// The compile-time description of service T that LP_SERVICE wrote.
template <service T>
using service_definition = detail::definition_of<T>;

// A node's run() is called on its own thread once every node serves.
template <class T>
concept runnable = requires(T& node) { node.run(); };

// A service opts into concurrent handlers with
//   static constexpr bool lp_concurrent_handlers = true;
// Otherwise calls to one node run one at a time, like an actor's messages.
template <class T>
concept concurrent_handlers = requires {
  requires static_cast<bool>(T::lp_concurrent_handlers);
};

}  // namespace lp

#define LP_SERVICE(T, ...)                                                                \
  template <class>                                                                        \
  struct lp_service_definition;                                                           \
  template <>                                                                             \
  struct lp_service_definition<T> {                                                       \
    using service_type = T;                                                               \
    static_assert(std::is_class_v<T>,                                                     \
                  "LP_SERVICE(" #T ", ...): a service must be a struct or class");        \
    static constexpr std::string_view name = #T;                                          \
    LP_DETAIL_FOR_EACH(LP_DETAIL_SERVICE_METHOD, T, __VA_ARGS__)                          \
    static constexpr auto methods =                                                       \
        boost::hana::tuple_t<LP_DETAIL_FOR_EACH_COMMA(LP_DETAIL_SERVICE_METHOD_TYPE, T,   \
                                                      __VA_ARGS__)>;                      \
    template <class Caller>                                                               \
    struct proxy : Caller {                                                               \
      using Caller::Caller;                                                               \
      LP_DETAIL_FOR_EACH(LP_DETAIL_SERVICE_PROXY, T, __VA_ARGS__)                         \
    };                                                                                    \
  };                                                                                      \
  lp_service_definition<T> lp_service_lookup(::lp_service_tag<T>)

#define LP_DETAIL_SERVICE_METHOD_TYPE(T, m) lp_method_##m

// One method descriptor. The probes tell "no such member" from "overloaded"
// so each mistake gets its own message instead of a page of template errors:
// a probe class that adds a member `m` makes `&probe::m` ambiguous exactly
// when T has a member of that name too.
#define LP_DETAIL_SERVICE_METHOD(T, m)                                                    \
  struct lp_method_##m {                                                                  \
    static constexpr std::string_view name = #m;                                          \
    struct probe_base {                                                                   \
      int m;                                                                              \
    };                                                                                    \
    template <class U>                                                                    \
    struct probe : U, probe_base {};                                                      \
    template <class U>                                                                    \
    static constexpr bool named = std::is_final_v<U> || !requires { &probe<U>::m; };      \
    template <class U>                                                                    \
    static constexpr bool addressable = requires { &U::m; };                              \
    /* A template, so that the branch not taken is never checked. */                    \
    static constexpr auto pointer = []<class U = T>() {                                   \
      if constexpr (addressable<U>) return &U::m;                                         \
      else return nullptr;                                                                \
    }();                                                                                  \
    using pointer_type = std::remove_const_t<decltype(pointer)>;                          \
    using traits = ::lp::detail::member_function<pointer_type>;                           \
    static_assert(named<T>, "LP_SERVICE(" #T ", " #m "): " #T                             \
                            " has no member named '" #m                                   \
                            "'; list only member functions of " #T);                      \
    static_assert(!named<T> || addressable<T>,                                            \
                  "LP_SERVICE(" #T ", " #m "): '" #m                                      \
                  "' is overloaded, a template or not public; a service method needs "    \
                  "exactly one public signature: give each overload its own name");       \
    static_assert(!addressable<T> || traits::valid,                                       \
                  "LP_SERVICE(" #T ", " #m "): '" #m                                      \
                  "' is not a non-static member function of " #T                          \
                  "; list only member functions");                                        \
    static_assert(!traits::valid || traits::wire_ok,                                      \
                  "LP_SERVICE(" #T ", " #m "): a parameter or the return type of " #T     \
                  "::" #m " has no wire form; give that type to_json/from_json "          \
                  "(e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE) or declare it with "         \
                  "BOOST_HANA_DEFINE_STRUCT");                                            \
    static_assert(!traits::valid || traits::params_by_value,                              \
                  "LP_SERVICE(" #T ", " #m "): " #T "::" #m                               \
                  " takes a parameter by non-const reference, but a remote caller's "     \
                  "argument is a copy; take it by value or const reference and return "   \
                  "the result");                                                          \
    static_assert(std::string_view(#m) != "async" && std::string_view(#m) != "node" &&   \
                      std::string_view(#m) != "with_deadline",                            \
                  "LP_SERVICE(" #T ", " #m "): lp::client uses the name '" #m             \
                  "' itself; rename the method");                                         \
  };

// One member of the client proxy, checking the call as the compiler would
// check a local one, with messages that name the service and the method.
#define LP_DETAIL_SERVICE_PROXY(T, m)                                                     \
  template <class... Args>                                                                \
  typename Caller::template result<lp_method_##m> m(Args&&... args) const {               \
    using lp_traits = typename ::lp::detail::signature_for_call<lp_method_##m, Args...>::type; \
    static_assert(lp_traits::arity == sizeof...(Args),                                    \
                  "lp::client<" #T ">::" #m                                               \
                  ": wrong number of arguments; pass exactly the parameters " #T          \
                  "::" #m " declares");                                                   \
    static_assert(lp_traits::template accepts<Args...>,                                   \
                  "lp::client<" #T ">::" #m                                               \
                  ": an argument does not convert to the parameter type " #T "::" #m      \
                  " declares; pass what a local call would accept");                      \
    return this->template lp_invoke<lp_method_##m>(std::forward<Args>(args)...);          \
  }

// LP_BATCHED(T, m, max_batch, max_wait) makes T::m a batched method: the
// node gathers concurrent calls, up to max_batch of them or as many as came
// within max_wait of the first, and invokes m once with them all. T::m takes
// a std::vector for each parameter (one element per call) and returns a
// std::vector with one result per call, in the same order (or void). Callers
// see single elements:
//
//   struct Policy { std::vector<int> act(std::vector<lp::tensor<float>> observations); };
//   LP_SERVICE(Policy, act);
//   LP_BATCHED(Policy, act, 64, std::chrono::milliseconds(5));
//   ...
//   int action = policy.act(observation);  // one observation, one action
//
// Write it right after LP_SERVICE, in the same namespace.
#define LP_BATCHED(T, m, max_batch, max_wait)                                             \
  constexpr ::lp::batch_limits lp_batch_limits(                                           \
      ::lp_batch_tag<lp_service_definition<T>::lp_method_##m>) {                          \
    return {static_cast<std::size_t>(max_batch),                                          \
            std::chrono::duration_cast<std::chrono::microseconds>(max_wait)};             \
  }                                                                                       \
  static_assert((max_batch) >= 1, "LP_BATCHED(" #T ", " #m ", ...): max_batch must be "   \
                                  "at least 1");                                          \
  static_assert(::lp::detail::batched_function<                                           \
                    lp_service_definition<T>::lp_method_##m::pointer_type>::shape_ok,      \
                "LP_BATCHED(" #T ", " #m ", ...): a batched method takes a std::vector "  \
                "for every parameter (one element per call) and returns a std::vector "   \
                "with one result per call, or void")
