#pragma once

// What the proxy members that LP_SERVICE writes are declared with. A member
// for method m of a client proxy over Caller (sync_caller or async_caller,
// call/caller.hpp) is
//
//   call_result<Caller, M> m(parameter_t<P>... args) const;   // M's own parameters
//   template <class... A> call_result<Caller, M> m(A&&...) const;
//   template <int = 0> call_result<Caller, M> m(braced_argument<M, I, P>...) const;
//
// and each is a thunk onto one of the functions declared below, which
// call/caller.hpp defines: a service's header needs no part of the client.

#include <cstddef>
#include <launchpad/detail/reflect/signature.hpp>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

// What a proxy's member for Method returns (call/caller.hpp specializes it).
template <class Caller, class Method>
struct call_result_of;
template <class Caller, class Method>
using call_result = typename call_result_of<Caller, Method>::type;

// A method's parameter types and their positions (1, 2, ...), from which a
// proxy member's declaration is written.
template <class... P>
struct parameter_types {};
template <class Types, class Positions>
struct call_shape_t {};
template <class Params>
struct shape_of;
template <class... P>
struct shape_of<std::tuple<P...>> {
  using type = call_shape_t<parameter_types<P...>, std::index_sequence_for<P...>>;
};
// Looked up when a client is compiled, not where LP_SERVICE stands (Caller
// makes it dependent), so that an LP_BATCHED after LP_SERVICE is seen.
template <class Method, class Caller>
struct looked_up_with {
  using type = Method;
};
template <class Method, class Caller>
using call_shape = typename shape_of<
    typename signature<typename looked_up_with<Method, Caller>::type>::params>::type;

// How the first member takes a parameter of type P: a number (or an enum)
// by value, anything else by const reference, so that a caller's object is
// written from where it is, never copied first.
template <class P>
using parameter_t = std::conditional_t<std::is_scalar_v<P>, P, const P&>;

// A call through the first member (whose arguments fit; call/caller.hpp),
// the second (checked first) and the third (rejected: one of its
// braced_arguments has failed the build; both in reflect/call_checks.hpp).
template <class Method, class Caller, class... A>
call_result<Caller, Method> proxy_call(const Caller& from, A&&... args);
template <class Method, class Caller, auto Pointer = Method::pointer, std::size_t... I,
          class... A>
call_result<Caller, Method> proxy_checked_call(const Caller& from,
                                               std::index_sequence<I...>, A&&... args);
template <class Method, class Caller>
[[noreturn]] call_result<Caller, Method> proxy_rejected_call();

}  // namespace lp::detail
