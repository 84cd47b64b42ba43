#pragma once

/// @file
/// LP_SERVICE and LP_BATCHED, which make a struct a service, and the
/// concepts that say what a service is and does (docs/concepts.md,
/// "Services and LP_SERVICE").

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <chrono>
#include <cstddef>
#include <launchpad/detail/reflect/build_checks.hpp>
#include <launchpad/detail/reflect/call_checks.hpp>
#include <launchpad/detail/reflect/preprocessor.hpp>
#include <launchpad/detail/reflect/proxy.hpp>
#include <launchpad/detail/reflect/service_checks.hpp>
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

/// A type that LP_SERVICE made a service: a node of a program that other
/// nodes call through `lp::client<T>`.
template <class T>
concept service = requires {
  lp_service_lookup(lp_service_tag<T>{});
  requires std::is_same_v<typename detail::definition_of<T>::service_type, T>;
};

/// The compile-time description of service T that LP_SERVICE wrote: its
/// `name` (a std::string_view) and its `methods` (a Boost.Hana tuple of one
/// descriptor per method, each with its `name` and member `pointer`).
///
/// ```cpp
/// static_assert(lp::service_definition<Counter>::name == "Counter");
/// ```
template <service T>
using service_definition = detail::definition_of<T>;

/// A service with a `void run()`: the launch calls it on a thread of its
/// own once every node serves, and the node keeps serving after it returns.
///
/// A run() that loops watches lp::stop_requested(). A program whose
/// run()s have all returned stops, except under a test's controller.
template <class T>
concept runnable = requires(T& node) {
  node.run();
};

/// A service whose calls may run at the same time, on many threads: it
/// guards its own state.
///
/// ```cpp
/// struct Cache {
///   static constexpr bool lp_concurrent_handlers = true;
///   std::string get(const std::string& key) const;  // may run on many threads at once
///   mutable std::shared_mutex mutex;                // guards what get() reads
/// };
/// ```
///
/// Otherwise calls to one node run one at a time, like an actor's messages,
/// and its state needs no lock (docs/concepts.md, "Calls to one node").
/// run() always runs beside the calls.
template <class T>
concept concurrent_handlers = requires {
  requires static_cast<bool>(T::lp_concurrent_handlers);
};

/// A service whose state survives restarts: it has `State lp_save() const`
/// and `void lp_restore(State)`, with State an lp::wire_type.
///
/// ```cpp
/// struct Counter {
///   long add(long x) { return total += x; }
///   long lp_save() const { return total; }
///   void lp_restore(long saved) { total = saved; }
///   long total = 0;
/// };
/// ```
///
/// The launch saves it every lp::node_group::checkpoint_every and when the
/// node stops, and restores it before a restarted node serves, or a node of
/// a launch given `--lp_resume` (docs/launching.md, "Checkpoints").
template <class T>
concept checkpointed = detail::restores_saved_state<T>;

}  // namespace lp

/// Makes the struct T a service: a node of a program that other nodes call
/// through `lp::client<T>`, with a member for each method listed.
///
/// ```cpp
/// struct Counter {
///   long add(long x) { return total += x; }
///   long get() const { return total; }
///   long total = 0;
/// };
/// LP_SERVICE(Counter, add, get);
/// ```
///
/// Write it right after T, in T's namespace or at global scope, before any
/// `lp::client<T>` is used. A service with a `void run()` and no remote
/// methods is written `LP_SERVICE(T)`. For a class template, name an alias:
/// `using IntBox = Box<int>; LP_SERVICE(IntBox, get);`.
///
/// Each method listed is a public, non-static member function, not
/// overloaded and not a template, named other than `async`, `node` and
/// `with_deadline` (lp::client's own), whose parameters (by value or const
/// reference) and result are lp::wire_type. A mistake stops the build with a
/// message that names the service, the method and the fix
/// (docs/troubleshooting.md, "At compile time").
///
/// @param T the struct
/// @param ... its remote methods' names, up to 64
//
// The macro only writes names: a descriptor per method (its name, its
// member pointer and two probes that need the name) and a proxy member per
// method that hands the call to the library. What it checks is in
// detail/reflect/service_checks.hpp; how a call is checked, in
// detail/reflect/call_checks.hpp.
#define LP_SERVICE(T, ...)                     \
  template <class>                             \
  struct lp_service_definition;                \
  template <>                                  \
  struct lp_service_definition<T> {            \
    LP_DETAIL_SERVICE_BODY(T, #T, __VA_ARGS__) \
  };                                           \
  lp_service_definition<T> lp_service_lookup(::lp_service_tag<T>)

// The definition's members, apart so that a library service template
// (lp::replay<Item>) writes its definition once for every argument: T may
// be dependent there, and `name` any constant expression.
#define LP_DETAIL_SERVICE_BODY(T, service_name, ...)                                   \
  using service_type = T;                                                              \
  static constexpr std::string_view name = service_name;                               \
  LP_DETAIL_FOR_EACH(LP_DETAIL_SERVICE_METHOD, T, __VA_ARGS__)                         \
  static constexpr auto methods = boost::hana::tuple_t<LP_DETAIL_FOR_EACH_COMMA(       \
      LP_DETAIL_SERVICE_METHOD_TYPE, T, __VA_ARGS__)>;                                 \
  static constexpr bool lp_checked = ::lp::detail::check_service<T LP_DETAIL_FOR_EACH( \
      LP_DETAIL_SERVICE_METHOD_NEXT, T, __VA_ARGS__)>();                               \
  template <class lp_Caller>                                                           \
  struct proxy : lp_Caller LP_DETAIL_FOR_EACH(LP_DETAIL_SERVICE_PROXY_BASE, T,         \
                                              __VA_ARGS__) {                           \
    using lp_Caller::lp_Caller;                                                        \
  };

#define LP_DETAIL_SERVICE_METHOD_TYPE(T, m) lp_method_##m
#define LP_DETAIL_SERVICE_METHOD_NEXT(T, m) , lp_method_##m
#define LP_DETAIL_SERVICE_PROXY_BASE(T, m) , lp_member_##m<lp_Caller, proxy<lp_Caller>>

// One method's descriptor and its proxy member. The probes tell "no such
// member" from "overloaded": a probe class that adds a member `m` makes
// `&probe::m` ambiguous exactly when T has a member of that name too. The
// member has three overloads (call_checks.hpp says how they divide calls);
// the first takes the method's own parameter types, so a braced argument
// works and an IDE shows the parameters.
#define LP_DETAIL_SERVICE_METHOD(T, m)                                                \
  struct lp_method_##m;                                                               \
  template <class lp_C, class lp_D,                                                   \
            class = ::lp::detail::call_shape<lp_method_##m, lp_C>>                    \
  struct lp_member_##m;                                                               \
  struct lp_method_##m {                                                              \
    static constexpr std::string_view name = #m;                                      \
    /* The proxy member alone, for a service that serves this one method too */       \
    /* (lp::cacher): its client gets the member without the service's others. */      \
    template <class lp_C, class lp_D>                                                 \
    using member = lp_member_##m<lp_C, lp_D>;                                         \
    struct probe_base {                                                               \
      int m;                                                                          \
    };                                                                                \
    template <class U>                                                                \
    struct probe : U, probe_base {};                                                  \
    template <class U>                                                                \
    static constexpr bool named = std::is_final_v<U> || !requires {                   \
      &probe<U>::m;                                                                   \
    };                                                                                \
    template <class U>                                                                \
    static constexpr bool addressable = requires {                                    \
      &U::m;                                                                          \
    };                                                                                \
    /* A template, so that the branch not taken is never checked. */                  \
    static constexpr auto pointer = []<class U = T>() {                               \
      if constexpr (addressable<U>)                                                   \
        return &U::m;                                                                 \
      else                                                                            \
        return nullptr;                                                               \
    }                                                                                 \
    ();                                                                               \
    using pointer_type = std::remove_const_t<decltype(pointer)>;                      \
  };                                                                                  \
  template <class lp_C, class lp_D, class... lp_P, ::std::size_t... lp_I>             \
  struct lp_member_##m<                                                               \
      lp_C, lp_D,                                                                     \
      ::lp::detail::call_shape_t<::lp::detail::parameter_types<lp_P...>,              \
                                 ::std::index_sequence<lp_I...>>> {                   \
    ::lp::detail::call_result<lp_C, lp_method_##m> m(                                 \
        ::lp::detail::parameter_t<lp_P>... lp_args) const {                           \
      return ::lp::detail::proxy_call<lp_method_##m, lp_C>(                           \
          static_cast<const lp_D&>(*this), lp_args...);                               \
    }                                                                                 \
    template <class... lp_A>                                                          \
    ::lp::detail::call_result<lp_C, lp_method_##m> m(lp_A&&... lp_args) const {       \
      return ::lp::detail::proxy_checked_call<lp_method_##m, lp_C>(                   \
          static_cast<const lp_D&>(*this), ::std::index_sequence_for<lp_A...>(),      \
          static_cast<lp_A&&>(lp_args)...);                                           \
    }                                                                                 \
    template <int = 0>                                                                \
    ::lp::detail::call_result<lp_C, lp_method_##m> m(                                 \
        ::lp::detail::braced_argument<lp_method_##m, int(lp_I) + 1, lp_P>...) const { \
      return ::lp::detail::proxy_rejected_call<lp_method_##m, lp_C>();                \
    }                                                                                 \
  };

/// Makes T::m a batched method: the node gathers concurrent calls, up to
/// `max_batch` of them or as many as came within `max_wait` of the first,
/// and invokes m once with them all.
///
/// T::m takes a std::vector for each parameter (one element per call) and
/// returns a std::vector with one result per call, in the same order (or
/// void). Callers see single elements:
///
/// ```cpp
/// struct Policy {
///   std::vector<int> act(std::vector<lp::tensor<float>> observations);
/// };
/// LP_SERVICE(Policy, act);
/// LP_BATCHED(Policy, act, 64, std::chrono::milliseconds(5));
/// ...
/// int action = policy.act(observation);  // one observation, one action
/// ```
///
/// If m throws, or returns another number of results, every caller of the
/// batch gets lp::remote_error. A batch is one turn of the node, as a call
/// is (docs/concepts.md, "Batched methods"). Write it right after
/// LP_SERVICE, in the same namespace.
///
/// @param T the service
/// @param m the method, listed in T's LP_SERVICE
/// @param max_batch the most calls in one batch
/// @param max_wait a std::chrono::duration: how long the first call of a
/// batch waits for others
#define LP_BATCHED(T, m, max_batch, max_wait)                                        \
  constexpr ::lp::detail::batch_limits lp_batch_limits(                              \
      ::lp_batch_tag<lp_service_definition<T>::lp_method_##m>) {                     \
    return {static_cast<std::size_t>(max_batch),                                     \
            std::chrono::duration_cast<std::chrono::microseconds>(max_wait)};        \
  }                                                                                  \
  static_assert(::lp::detail::check_batched<lp_service_definition<T>::lp_method_##m, \
                                            static_cast<long long>(max_batch)>())
