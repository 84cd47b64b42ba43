#pragma once

#include <cstddef>
#include <launchpad/detail/type_name.hpp>
#include <launchpad/wire.hpp>
#include <string>
#include <tuple>
#include <type_traits>

namespace lp::detail {

// What a service method looks like on the wire, from its member pointer.
// Not a method: LP_SERVICE has already said why. The neutral answers below
// keep that one message from being followed by a cascade of others.
template <class Pointer>
struct member_function {
  static constexpr bool valid = false;
  using result = void;
  using params = std::tuple<>;
  static constexpr std::size_t arity = 0;
  static constexpr bool params_by_value = true;
  static constexpr bool wire_ok = true;
  template <class... Args>
  static constexpr bool accepts = true;
};

template <class C, class R, class... P, bool NoExcept>
struct member_function<R (C::*)(P...) noexcept(NoExcept)> {
  static constexpr bool valid = true;
  using result = std::remove_cvref_t<R>;
  using params = std::tuple<std::remove_cvref_t<P>...>;
  static constexpr std::size_t arity = sizeof...(P);

  // A method may take its parameters by value or by const reference: the
  // caller's value is copied over the wire, so a reference it could write
  // through would silently write to nothing.
  static constexpr bool params_by_value =
      ((!std::is_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>) && ...);
  static constexpr bool wire_ok = wire_type<result> && (wire_type<std::remove_cvref_t<P>> && ...);

  template <class... Args>
  static constexpr bool accepts = [] {
    if constexpr (sizeof...(Args) != arity) return true;  // reported by the arity check
    else return (std::is_convertible_v<Args, std::remove_cvref_t<P>> && ...);
  }();

  static std::string describe(std::string_view name) {
    std::string text = type_name<result>() + " " + std::string(name) + "(";
    std::size_t i = 0;
    ((text += (i++ ? ", " : "") + type_name<std::remove_cvref_t<P>>()), ...);
    return text + ")";
  }
};

template <class C, class R, class... P, bool NoExcept>
struct member_function<R (C::*)(P...) const noexcept(NoExcept)>
    : member_function<R (C::*)(P...) noexcept(NoExcept)> {};

// The traits of a method descriptor that LP_SERVICE generates.
template <class Method>
using signature = member_function<typename Method::pointer_type>;

}  // namespace lp::detail
