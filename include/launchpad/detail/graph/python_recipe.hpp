#pragma once

// What a launch needs to start a node of a Python service (LP_PYTHON): the
// class, the C++ declaration to compare with its type hints, and the
// constructor's arguments in their wire form. Made where the user's code
// knows the types; read by the node's host (detail/python/).

#include <launchpad/detail/graph/handle_arguments.hpp>
#include <launchpad/detail/serve/method_list.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/schema.hpp>
#include <launchpad/python.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace lp::detail {

// One argument of the class's __init__: a value, or the labels of the
// nodes a handle (or a std::vector of handles) names, which the runtime
// turns into typed clients.
struct python_argument {
  std::string cbor;                     // the value; empty for handles
  const type_schema* schema = nullptr;  // the value's type; null for handles
  std::vector<std::string> handles;
  bool handle_list = false;  // a std::vector of handles: a Python list of clients
};

struct python_recipe {
  python_class where;
  // The C++ declaration; null for a Launchpad program's node, whose
  // methods are untyped, as Courier's (docs/coming_from_launchpad.md).
  const std::vector<method_info>* methods = nullptr;
  std::vector<python_argument> arguments;
  // The State of the declaration's lp_save (lp::checkpointed): the class's
  // state() returns one, and restore(value) takes it. Null: no checkpoint.
  const type_schema* state = nullptr;
  // A Launchpad program's node: what it calls and with which arguments,
  // cloudpickled by the program's front end (python/launchpad/), which
  // only the node's own process unpickles. Empty for an LP_PYTHON node.
  std::string definition;
};

template <class T>
const type_schema* declared_state() {
  if constexpr (lp::checkpointed<T>)
    return &schema_of<std::decay_t<decltype(std::declval<const T&>().lp_save())>>::value;
  else
    return nullptr;
}

template <class A>
inline constexpr bool is_handle_list = false;
template <class T>
inline constexpr bool is_handle_list<std::vector<handle<T>>> = true;

// A constructor argument of a Python node can cross the wire, or names nodes.
template <class A>
concept python_argument_type = is_handle<A> || is_handle_list<A> || has_wire_form<A>;

// As a value, so that a compiler's message for the refusal is the library's
// alone, not each concept's reasons.
template <class... A>
inline constexpr bool python_arguments = (python_argument_type<A> && ...);

template <class A>
python_argument python_argument_of(const A& value) {
  python_argument out;
  if constexpr (is_handle<A> || is_handle_list<A>) {
    out.handle_list = is_handle_list<A>;
    for_each_handle(value, [&](const std::string& label, const void*) {
      out.handles.push_back(label);
    });
  } else {
    cbor::write(out.cbor, value);
    out.schema = &schema_of<A>::value;
  }
  return out;
}

}  // namespace lp::detail
