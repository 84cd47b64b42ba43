#pragma once

// Why add_node<T>(label, args...) cannot build T: which argument T does not
// take, and what T takes there instead. The common case is a handle of the
// wrong service (a handle<A> becomes an lp::client<A>, and T has an
// lp::client<B>); in general, an argument whose type is one specialization
// of a template (lp::client<A>, std::vector<lp::client<A>>) where T takes
// another of the same template.
//
// To find it, each argument in turn is replaced by a stand-in that converts
// to any other specialization of its type's template. If T can then be
// built, and cannot be when those conversions are deleted (so building T
// really goes through one of them), that argument is the one: building T
// from the stand-in once more, for real, instantiates the conversion to the
// type T takes, whose static_assert names both types.

#include <cstddef>
#include <launchpad/detail/reflect/diagnostics.hpp>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

// As add_node builds a node: T(args...) or, for an aggregate, T{args...}.
template <class T, class... A>
concept builds_either_way = std::is_constructible_v<T, A...> || requires(A&&... args) {
  T{std::forward<A>(args)...};
};

// Named only in code that is compiled to be explained, never run.
template <class X>
X declared_value();

// The stand-in for an argument of type Given, the Position-th after the
// label; with Deleted, its conversions are deleted. A type that is no
// template's specialization has no stand-in that converts.
template <class Node, int Position, class Given, bool Deleted>
struct other_specialization {};

template <class Node, int Position, template <class...> class Template, class... A>
struct other_specialization<Node, Position, Template<A...>, false> {
  // clang-format off
  template <class... B>
    requires(!std::is_same_v<Template<B...>, Template<A...>>)
  operator Template<B...>() const {
    // The condition on one line, so that g++ quotes it as one.
    static_assert(node<Node>::template argument<Position>::template is<Template<A...>>::template where_the_node_takes<Template<B...>>,
                  "add_node<T>(label, args...): T takes another type where this argument is "
                  "given (T, the argument's position after the label, the type given and the "
                  "type T takes are named beside this message). An lp::handle<S> becomes an "
                  "lp::client<S>, so a handle<A> cannot fill a client<B>: pass a handle of the "
                  "service T expects");
    return declared_value<Template<B...>>();
  }
  // clang-format on
};

template <class Node, int Position, template <class...> class Template, class... A>
struct other_specialization<Node, Position, Template<A...>, true> {
  // clang-format off
  template <class... B>
    requires(!std::is_same_v<Template<B...>, Template<A...>>)
  operator Template<B...>() const = delete;
  // clang-format on
};

// The arguments with the I-th replaced by its stand-in.
template <class Node, std::size_t I, bool Deleted, class... A, std::size_t... J>
constexpr bool builds_with_stand_in(std::index_sequence<J...>) {
  return builds_either_way<
      Node,
      std::conditional_t<
          J == I, other_specialization<Node, static_cast<int>(I) + 1, A, Deleted>, A>...>;
}

template <class Node, std::size_t I, class... A>
constexpr bool is_the_misfit =
    builds_with_stand_in<Node, I, false, A...>(std::index_sequence_for<A...>{}) &&
    !builds_with_stand_in<Node, I, true, A...>(std::index_sequence_for<A...>{});

// The position of the first misfit from 1, or 0 if there is none.
template <class Node, class... A, std::size_t... I>
constexpr std::size_t first_misfit(std::index_sequence<I...>) {
  std::size_t found = 0;
  ((found = found == 0 && is_the_misfit<Node, I, A...> ? I + 1 : found), ...);
  return found;
}

// Builds Node with the I-th argument replaced by its stand-in: compiling it
// compiles the stand-in's conversion to the type Node takes.
template <class Node, std::size_t I, class Positions, class... A>
struct explanation;
template <class Node, std::size_t I, std::size_t... J, class... A>
struct explanation<Node, I, std::index_sequence<J...>, A...> {
  using stand_in = other_specialization<Node, static_cast<int>(I) + 1,
                                        std::tuple_element_t<I, std::tuple<A...>>, false>;
  static void build() {
    if constexpr (std::is_constructible_v<Node,
                                          std::conditional_t<J == I, stand_in, A>...>)
      (void)Node(declared_value<std::conditional_t<J == I, stand_in, A>>()...);
    else
      (void)Node{declared_value<std::conditional_t<J == I, stand_in, A>>()...};
  }
};

// Whether Node can be built from arguments of types A... (as handles
// become clients), or, if not, whether the misfit argument has been
// explained by the stand-in's static_assert. add_node's own static_assert
// asks this, and gives its general message only when neither holds.
template <class Node, class... A>
constexpr bool buildable_or_explained() {
  if constexpr (builds_either_way<Node, A...>) {
    return true;
  } else {
    constexpr std::size_t misfit =
        first_misfit<Node, A...>(std::index_sequence_for<A...>{});
    if constexpr (misfit == 0) {
      return false;
    } else {
      (void)&explanation<Node, misfit - 1, std::index_sequence_for<A...>, A...>::build;
      return true;
    }
  }
}

}  // namespace lp::detail
