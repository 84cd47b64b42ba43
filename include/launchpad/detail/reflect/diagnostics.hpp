#pragma once

// Conditions that read as sentences in the compiler's output.
//
// A static_assert's message is a string literal (C++20), so it cannot hold
// the names of the types involved. Its condition can: g++ prints a failed
// condition with the template arguments filled in ("note: '...' evaluates
// to false"), clang++ prints it in the error line itself ("static assertion
// failed due to requirement '...'"). The library's checks therefore write
// their conditions with the templates below, so that next to the message
// the user reads, for example,
//
//   lp::detail::method<&Counter::add>::argument<1>::is<const char
//   (&)[5]>::convertible_to<long int>
//
// which names the method, the argument's position, the type given and the
// parameter's type. Each template is only a name for its condition; none
// holds logic of its own.

#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/wire.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

namespace lp::detail {

// Whether a parameter of type P can be copy-list-initialized from {U...},
// as a braced argument of a local call would initialize it.
template <class P>
void accept_braced(P);
template <class P, class... U>
concept list_initializes = requires(U&&... values) {
  accept_braced<P>({std::forward<U>(values)...});
};

// Checks of a method, named by its member pointer (&T::m). Positions and
// counts are ints, which both compilers print as plain numbers.
template <auto Method>
struct method {
  template <int Position>
  struct argument {
    template <class Given>
    struct is {
      template <class Parameter>
      static constexpr bool convertible_to = std::is_convertible_v<Given, Parameter>;
    };
    // A braced list {Given...}, or one value of type Given: it initializes
    // Parameter when it would either way, as a list and (one value) as a value.
    template <class... Given>
    struct from {
      template <class Parameter>
      static constexpr bool initializes =
          list_initializes<Parameter, Given...> &&
          (sizeof...(Given) != 1 || (std::is_convertible_v<Given, Parameter> && ...));
    };
  };
  template <int Parameters>
  struct parameter_count {
    template <int Arguments>
    static constexpr bool equals_argument_count = Parameters == Arguments;
  };
  template <class Type>
  struct uses {
    static constexpr bool which_has_a_wire_form = wire_type<Type>;
    static constexpr bool whose_codec_is_included = json_codec_included<Type>;
  };
  template <class Parameter>
  struct takes {
    static constexpr bool by_value_or_const_reference =
        !std::is_reference_v<Parameter> ||
        std::is_const_v<std::remove_reference_t<Parameter>>;
  };
};

// Checks of a method descriptor that LP_SERVICE wrote
// (lp_service_definition<T>::lp_method_<name>), for methods that have no
// member pointer to name them by.
template <class Descriptor>
struct listed {
  template <class T>
  static constexpr bool is_a_member_of = Descriptor::template named<T>;
  template <class T>
  static constexpr bool has_one_public_signature_in = Descriptor::template addressable<T>;
  template <class T>
  static constexpr bool is_a_non_static_member_function_of =
      member_function<typename Descriptor::pointer_type>::valid;
  // lp::client's own members would hide the method.
  template <class Client>
  static constexpr bool has_a_name_of_its_own_in =
      Descriptor::name != std::string_view("async") &&
      Descriptor::name != std::string_view("node") &&
      Descriptor::name != std::string_view("with_deadline");
};

// Checks of a batched method, named by its member pointer.
template <auto Method>
struct batched {
  static constexpr bool takes_vectors_and_returns_a_vector_or_void =
      batched_function<decltype(Method)>::shape_ok;
  template <long long MaxBatch>
  struct max_batch {
    static constexpr bool is_at_least_one = MaxBatch >= 1;
  };
};

// Checks of a node's arguments: add_node<Node>(label, args...).
template <class Node>
struct node {
  template <int Position>
  struct argument {
    template <class Given>
    struct is {
      template <class Parameter>
      static constexpr bool where_the_node_takes =
          std::is_convertible_v<Given, Parameter>;
    };
  };
};

}  // namespace lp::detail
