#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <launchpad/detail/util/type_name.hpp>
#include <launchpad/wire.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace lp::detail {

// What a service method looks like on the wire, from its member pointer.
// Not a method: LP_SERVICE has already said why. The neutral answers below
// keep that one message from being followed by a cascade of others.
template <class Pointer>
struct member_function {
  static constexpr bool valid = false;
  using result = void;
  using params = std::tuple<>;
  using declared_params = std::tuple<>;
  static constexpr std::size_t arity = 0;
  static constexpr bool params_by_value = true;
  static constexpr bool wire_ok = true;
  static constexpr std::string_view types[] = {"void"};
};

template <class C, class R, class... P, bool NoExcept>
struct member_function<R (C::*)(P...) noexcept(NoExcept)> {
  static constexpr bool valid = true;
  using result = std::remove_cvref_t<R>;
  using params = std::tuple<std::remove_cvref_t<P>...>;
  using declared_params = std::tuple<P...>;  // as written, references and all
  static constexpr std::size_t arity = sizeof...(P);

  // A method may take its parameters by value or by const reference: the
  // caller's value is copied over the wire, so a reference it could write
  // through would silently write to nothing.
  template <class Q>
  static constexpr bool by_value =
      !std::is_reference_v<Q> || std::is_const_v<std::remove_reference_t<Q>>;
  static constexpr bool params_by_value = (by_value<P> && ...);
  static constexpr bool wire_ok =
      wire_type<result> && (wire_type<std::remove_cvref_t<P>> && ...);

  // How the compiler spells the result and each parameter (describe's
  // signature_text).
  static constexpr std::string_view types[] = {type_spelling<result>,
                                               type_spelling<std::remove_cvref_t<P>>...};
};

template <class C, class R, class... P, bool NoExcept>
struct member_function<R (C::*)(P...) const noexcept(NoExcept)>
    : member_function<R (C::*)(P...) noexcept(NoExcept)> {};

// A std::vector parameter or result of a batched method, and its element.
template <class T>
struct batch_column {
  static constexpr bool is_vector = false;
  using type = void;  // a batched method returning void answers each caller with void
};
template <class E>
struct batch_column<std::vector<E>> {
  static constexpr bool is_vector = true;
  using type = E;
};

// A batched method as its callers see it: each caller passes one element of
// every vector parameter and gets one element of the vector result.
template <class Pointer>
struct batched_function;

template <class C, class R, class... P, bool NoExcept>
struct batched_function<R (C::*)(P...) noexcept(NoExcept)> {
  using whole = member_function<R (C::*)(P...) noexcept(NoExcept)>;
  static constexpr bool valid = whole::valid;
  static constexpr bool shape_ok =
      (std::is_void_v<R> || batch_column<std::remove_cvref_t<R>>::is_vector) &&
      (batch_column<std::remove_cvref_t<P>>::is_vector && ...) && sizeof...(P) > 0;
  using result = typename batch_column<std::remove_cvref_t<R>>::type;
  using params = std::tuple<typename batch_column<std::remove_cvref_t<P>>::type...>;
  using batch_params = std::tuple<std::remove_cvref_t<P>...>;
  static constexpr std::size_t arity = sizeof...(P);
  static constexpr bool params_by_value = whole::params_by_value;
  static constexpr bool wire_ok = whole::wire_ok;

  static constexpr std::string_view types[] = {
      type_spelling<result>,
      type_spelling<typename batch_column<std::remove_cvref_t<P>>::type>...};
};

template <class C, class R, class... P, bool NoExcept>
struct batched_function<R (C::*)(P...) const noexcept(NoExcept)>
    : batched_function<R (C::*)(P...) noexcept(NoExcept)> {};

template <class Pointer>
struct batched_function : member_function<Pointer> {  // not a method: LP_SERVICE said so
  static constexpr bool shape_ok = true;
  using batch_params = std::tuple<>;
};

}  // namespace lp::detail

// LP_BATCHED declares `lp_batch_limits(lp_batch_tag<Method>)` beside the
// service; argument-dependent lookup finds it, as for lp_service_tag.
template <class Method>
struct lp_batch_tag {};

namespace lp::detail {

// How a batched method gathers its callers: what LP_BATCHED says.
struct batch_limits {
  std::size_t max_batch;
  std::chrono::microseconds max_wait;
};

template <class Method>
concept batched_method = requires {
  { lp_batch_limits(lp_batch_tag<Method>{}) } -> std::same_as<batch_limits>;
};

template <class Method>
struct signature_of {
  using type = member_function<typename Method::pointer_type>;
};
template <class Method>
requires batched_method<Method>
struct signature_of<Method> {
  using type = batched_function<typename Method::pointer_type>;
};

// The traits of a method descriptor that LP_SERVICE generates, as callers
// see the method: a batched method takes and returns single elements.
// First looked up when a client or a node of the service is compiled, so an
// LP_BATCHED right after LP_SERVICE is seen (LP_SERVICE's own checks read
// member_function directly, never this).
template <class Method>
using signature = typename signature_of<Method>::type;

}  // namespace lp::detail
