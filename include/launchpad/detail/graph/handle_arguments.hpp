#pragma once

#include <functional>
#include <launchpad/client.hpp>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail {

// Given by the launch policy: a channel to the node with this label.
using connector = std::function<std::shared_ptr<channel>(const std::string& label)>;

template <class A>
inline constexpr bool is_handle = false;
template <class T>
inline constexpr bool is_handle<handle<T>> = true;

// A node's argument as the program keeps it: text given as a string
// literal, a char array or a char pointer becomes a std::string, which a
// Python node's __init__ takes as a str and which outlives the caller's
// buffer; anything else is kept as it is, decayed.
template <class A>
inline constexpr bool is_char_pointer = std::is_same_v<std::decay_t<A>, const char*> ||
                                        std::is_same_v<std::decay_t<A>, char*>;
template <class A>
using kept_argument_t =
    std::conditional_t<is_char_pointer<A>, std::string, std::decay_t<A>>;

template <class A>
kept_argument_t<A> kept_argument(A&& argument) {
  if constexpr (is_char_pointer<A>) {
    if constexpr (std::is_pointer_v<std::remove_reference_t<A>>)  // (an array has text)
      if (!argument)
        throw graph_error("add_node: a null char pointer is no text; pass a string");
    return std::string(argument);
  } else {
    return std::forward<A>(argument);
  }
}

// Calls f on every handle in a node argument.
template <class A, class F>
void for_each_handle(const A& argument, F&& f) {
  if constexpr (is_handle<A>) {
    f(argument.label(), argument.owner());
  } else if constexpr (is_std_vector<A>) {
    for (const auto& element : argument) for_each_handle(element, f);
  }
}

// A node argument as the node receives it: handles become clients.
template <class A>
auto resolve(const A& argument, const connector& connect) {
  if constexpr (is_handle<A>) {
    return client_access::make<typename A::service_type>(connect(argument.label()));
  } else if constexpr (is_std_vector<A>) {
    std::vector<decltype(resolve(argument.front(), connect))> out;
    out.reserve(argument.size());
    for (const auto& element : argument) out.push_back(resolve(element, connect));
    return out;
  } else {
    return argument;
  }
}

template <class A>
using resolved_t =
    decltype(resolve(std::declval<const A&>(), std::declval<const connector&>()));

template <class T, class... A>
concept buildable_from = std::is_constructible_v<T, A...> || requires(A&&... args) {
  T{std::forward<A>(args)...};
};

template <class T, class... A>
std::unique_ptr<T> build(A&&... args) {
  if constexpr (std::is_constructible_v<T, A...>)
    return std::make_unique<T>(std::forward<A>(args)...);
  else
    return std::unique_ptr<T>(new T{std::forward<A>(args)...});
}

}  // namespace lp::detail
