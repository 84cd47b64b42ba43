#pragma once

/// @file
/// LP_PYTHON, which makes the nodes of a service objects of a Python class
/// (docs/python_nodes.md).

#include <concepts>
#include <launchpad/service.hpp>
#include <string_view>

namespace lp {

/// Where a Python service's class lives, as LP_PYTHON names it.
struct python_class {
  std::string_view module;  ///< as Python imports it (importlib.import_module)
  std::string_view name;    ///< the class in it
};

/// A service whose nodes are objects of a Python class (LP_PYTHON).
template <class T>
concept python_service = service<T> && requires {
  { lp_python_lookup(lp_service_tag<T>{}) } -> std::same_as<python_class>;
};

/// The Python class that serves T.
template <python_service T>
inline constexpr python_class python_class_of = lp_python_lookup(lp_service_tag<T>{});

}  // namespace lp

/// Makes the nodes of service T objects of a Python class: C++ declares the
/// service's methods and their types once, in an interface struct whose
/// methods it never defines, and Python implements them.
///
/// ```cpp
/// struct Learner {  // served by Python
///   float update(std::vector<float> batch);
///   lp::tensor<float> parameters();
///   void run();  // if the class has a run()
/// };
/// LP_SERVICE(Learner, update, parameters);
/// LP_PYTHON(Learner, "learner", "Learner");  // learner.py: class Learner
/// ```
///
/// `p.add_node<Learner>("learner", args...)` then adds a node as for a C++
/// service: its arguments (values with a wire form, and handles, which
/// arrive as typed Python clients) go to the class's `__init__`, and
/// `lp::client<Learner>` calls it. Before the node serves, the launch
/// compares the class's type hints with the declaration and stops with a
/// message that names the node, the method and both types where they
/// differ. `--lp_python` names the interpreter (docs/python_nodes.md,
/// "Launching").
///
/// Write it right after LP_SERVICE(T, ...), in the same namespace.
/// @param T the service, declared with LP_SERVICE
/// @param module the Python module, as `import` names it: "learner", "agents.learner"
/// @param class_name the class in it
#define LP_PYTHON(T, module, class_name)                               \
  constexpr ::lp::python_class lp_python_lookup(::lp_service_tag<T>) { \
    return {module, class_name};                                       \
  }                                                                    \
  static_assert(::lp::service<T>,                                      \
                "LP_PYTHON(" #T ", ...): write LP_SERVICE(" #T         \
                ", methods...) first, naming the methods Python serves")
