#pragma once

// The checks of a call through lp::client<T>, as the compiler would check a
// local call, with messages that say which argument is wrong. LP_SERVICE
// writes three proxy members for a method m (service.hpp, reflect/proxy.hpp):
//
//   R m(P1, P2) const;                             // its parameter types
//   template <class... A> R m(A&&...) const;       // anything else, forwarded
//   template <int = 0> R m(braced_argument...) const;  // braced lists that fit no P
//
// A call the first fits converts its arguments as a local call would. The
// second also takes calls the first would take after a conversion (it is
// the better match for an int given to a long): both write the same bytes,
// and an argument of exactly its parameter's type is written from where it
// is (call/caller.hpp, write_argument). proxy_checked_call checks the calls
// it takes; the third member's braced_arguments check theirs. Either fails
// to compile with a message naming the argument's position and, in its
// condition, the method, the type given and the parameter's type. As the
// second and third take any arguments in overload resolution, so that the
// message is ours, std::is_invocable says yes to a call that then fails to
// compile.

#include <cstddef>
#include <launchpad/detail/reflect/diagnostics.hpp>
#include <launchpad/detail/reflect/proxy.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/error.hpp>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

// Argument `Position` of a call of Method, of type Given (as a forwarding
// reference deduced it), for a parameter of type Parameter.
template <auto Method, int Position, class Given, class Parameter>
constexpr bool check_argument() {
  constexpr bool ok = std::is_convertible_v<Given, Parameter>;
  if constexpr (!ok) {
    // One message per position, as a message cannot be computed. Each
    // condition stays on one line, so g++ quotes it as one line.
    // clang-format off
    if constexpr (Position == 1)
      static_assert(method<Method>::template argument<Position>::template is<Given>::template convertible_to<Parameter>,
                    "lp::client<T>::m: argument 1 does not convert to the type of parameter 1 of "
                    "T::m (T::m and both types are named beside this message); pass what a "
                    "local call would accept");
    else if constexpr (Position == 2)
      static_assert(method<Method>::template argument<Position>::template is<Given>::template convertible_to<Parameter>,
                    "lp::client<T>::m: argument 2 does not convert to the type of parameter 2 of "
                    "T::m (T::m and both types are named beside this message); pass what a "
                    "local call would accept");
    else if constexpr (Position == 3)
      static_assert(method<Method>::template argument<Position>::template is<Given>::template convertible_to<Parameter>,
                    "lp::client<T>::m: argument 3 does not convert to the type of parameter 3 of "
                    "T::m (T::m and both types are named beside this message); pass what a "
                    "local call would accept");
    else if constexpr (Position == 4)
      static_assert(method<Method>::template argument<Position>::template is<Given>::template convertible_to<Parameter>,
                    "lp::client<T>::m: argument 4 does not convert to the type of parameter 4 of "
                    "T::m (T::m and both types are named beside this message); pass what a "
                    "local call would accept");
    else
      static_assert(method<Method>::template argument<Position>::template is<Given>::template convertible_to<Parameter>,
                    "lp::client<T>::m: an argument after the 4th does not convert to the type of "
                    "its parameter (T::m, its position and both types are named beside this "
                    "message); pass what a local call would accept");
    // clang-format on
  }
  return ok;
}

// A call through the proxy's forwarding member, of Method (whose member
// pointer is Pointer) with arguments of types A... (as forwarding
// references deduced them; I... are their positions from 0). It is sent
// only if it passes; otherwise a static_assert says why (or LP_SERVICE has,
// for a method that is not one) and the build stops.
template <class Method, class Caller, auto Pointer, std::size_t... I, class... A>
call_result<Caller, Method> proxy_checked_call(const Caller& from,
                                               std::index_sequence<I...>, A&&... args) {
  using traits = signature<Method>;
  if constexpr (!traits::valid) {
    throw usage_error("unreachable: LP_SERVICE rejected the method at compile time");
  } else if constexpr (traits::arity != sizeof...(A)) {
    // clang-format off
    static_assert(method<Pointer>::template parameter_count<static_cast<int>(traits::arity)>::template equals_argument_count<static_cast<int>(sizeof...(A))>,
                  "lp::client<T>::m: wrong number of arguments (T::m and both counts are named "
                  "beside this message); pass exactly the parameters T::m declares");
    // clang-format on
    throw usage_error("unreachable: the call was rejected at compile time");
  } else if constexpr ((static_cast<int>(
                            check_argument<
                                Pointer, static_cast<int>(I) + 1, A,
                                std::tuple_element_t<I, typename traits::params>>()) &
                        ...)) {  // &, not &&: every argument is checked, and each named
    return proxy_call<Method>(from, std::forward<A>(args)...);
  } else {
    throw usage_error("unreachable: the call was rejected at compile time");
  }
}

// Argument `Position` of a call of Method through the proxy's third member:
// a braced list (or, beside one, a plain value) that made the first member
// unviable. Any arguments build it; its constructor checks them as the
// parameter would take them.
//
// A call gets here only when the member taking the parameters themselves
// does not fit, and an argument that passes this check would fit it (both
// as a braced list and as a value), so at least one argument of such a call
// fails here: the call never compiles.
template <class Method, int Position, class Parameter, auto Pointer = Method::pointer>
struct braced_argument {
  template <class... U>
  braced_argument(U&&...) {
    // clang-format off
    if constexpr (Position == 1)
      static_assert(method<Pointer>::template argument<Position>::template from<U...>::template initializes<Parameter>,
                    "lp::client<T>::m: argument 1 does not initialize parameter 1 of T::m (T::m, "
                    "what was given and the parameter type are named beside this message); "
                    "pass a value or a braced list that a local call would accept");
    else if constexpr (Position == 2)
      static_assert(method<Pointer>::template argument<Position>::template from<U...>::template initializes<Parameter>,
                    "lp::client<T>::m: argument 2 does not initialize parameter 2 of T::m (T::m, "
                    "what was given and the parameter type are named beside this message); "
                    "pass a value or a braced list that a local call would accept");
    else if constexpr (Position == 3)
      static_assert(method<Pointer>::template argument<Position>::template from<U...>::template initializes<Parameter>,
                    "lp::client<T>::m: argument 3 does not initialize parameter 3 of T::m (T::m, "
                    "what was given and the parameter type are named beside this message); "
                    "pass a value or a braced list that a local call would accept");
    else if constexpr (Position == 4)
      static_assert(method<Pointer>::template argument<Position>::template from<U...>::template initializes<Parameter>,
                    "lp::client<T>::m: argument 4 does not initialize parameter 4 of T::m (T::m, "
                    "what was given and the parameter type are named beside this message); "
                    "pass a value or a braced list that a local call would accept");
    else
      static_assert(method<Pointer>::template argument<Position>::template from<U...>::template initializes<Parameter>,
                    "lp::client<T>::m: an argument after the 4th does not initialize its "
                    "parameter (T::m, its position, what was given and the parameter type are "
                    "named beside this message); pass a value or a braced list that a local call "
                    "would accept");
    // clang-format on
  }
};

// A call through the proxy's third member: one of its braced_arguments has
// failed the build already.
template <class Method, class Caller>
call_result<Caller, Method> proxy_rejected_call() {
  throw usage_error("unreachable: the call was rejected at compile time");
}

}  // namespace lp::detail
