#pragma once

// The checks of LP_SERVICE(T, methods...) and LP_BATCHED(T, m, ...). The
// macros only write names (a descriptor per method, with probes that need
// the method's name); everything they check is here, so a mistake stops the
// build at one of these static_asserts. Its message says what is wrong and
// what to do; its condition, printed beside it, names T and the method
// (diagnostics.hpp), and so does the compiler's "In instantiation of" line.

#include <cstddef>
#include <launchpad/detail/reflect/diagnostics.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/wire.hpp>
#include <tuple>
#include <type_traits>

namespace lp {
template <class T>
class client;
}  // namespace lp

namespace lp::detail {

// The first of the result and the parameters without a wire form.
template <class... Types>
struct first_without_wire_form {
  using type = void;
};
template <class First, class... Rest>
struct first_without_wire_form<First, Rest...> {
  using type = std::conditional_t<wire_type<First>,
                                  typename first_without_wire_form<Rest...>::type, First>;
};
template <class Result, class Params>
struct unwired;
template <class Result, class... P>
struct unwired<Result, std::tuple<P...>> : first_without_wire_form<Result, P...> {};

// The first of the result and the parameters that crosses through nlohmann
// (void if none does), and whether its codec is in reach. (A void result
// is looked at as a bool, which needs no codec.)
template <class Result, class Params>
struct through_nlohmann;
template <class Result, class... P>
struct through_nlohmann<Result, std::tuple<P...>>
    : first_part_of_kind<
          type_list<>, nlohmann_kinds,
          std::tuple<std::conditional_t<std::is_void_v<Result>, bool, Result>,
                     std::remove_cvref_t<P>...>> {};
template <class Traits>
using nlohmann_part_of =
    typename through_nlohmann<typename Traits::result, typename Traits::params>::type;
template <class Type>
inline constexpr bool codec_in_reach = json_codec_included<Type>;
template <>
inline constexpr bool codec_in_reach<void> = true;

// The first parameter taken by non-const reference (void if there is none).
template <class Tuple>
struct first_by_reference {
  using type = void;
};
template <class First, class... Rest>
struct first_by_reference<std::tuple<First, Rest...>> {
  using type =
      std::conditional_t<std::is_reference_v<First> &&
                             !std::is_const_v<std::remove_reference_t<First>>,
                         First, typename first_by_reference<std::tuple<Rest...>>::type>;
};

// One method LP_SERVICE(T, ..., m, ...) lists. The checks run in order and
// each stops the others, so one mistake gives one message.
template <class T, class Descriptor, auto Pointer = Descriptor::pointer>
constexpr bool check_method() {
  using traits = member_function<typename Descriptor::pointer_type>;
  if constexpr (!Descriptor::template named<T>) {
    static_assert(
        listed<Descriptor>::template is_a_member_of<T>,
        "LP_SERVICE(T, m): T has no member named m (T and m are named beside this "
        "message); list only member functions of T");
    return false;
  } else if constexpr (!Descriptor::template addressable<T>) {
    static_assert(
        listed<Descriptor>::template has_one_public_signature_in<T>,
        "LP_SERVICE(T, m): m is overloaded, a template or not public (T and m are named "
        "beside this message); a service method needs exactly one public signature: "
        "give each overload its own name");
    return false;
  } else if constexpr (!traits::valid) {
    static_assert(
        listed<Descriptor>::template is_a_non_static_member_function_of<T>,
        "LP_SERVICE(T, m): m is not a non-static member function of T (T and m are named "
        "beside this message); list only member functions");
    return false;
  } else if constexpr (!traits::wire_ok) {
    using missing =
        typename unwired<typename traits::result, typename traits::params>::type;
    // One message, with the reason of the innermost type that does not
    // cross (the variant in a std::vector<std::variant<...>>).
    constexpr wire_kind why = wire_kind_of<wire_offender<missing>>;
#define LP_DETAIL_NO_WIRE_FORM(reason, text)                                       \
  static_assert(                                                                   \
      why != wire_kind::reason ||                                                  \
          method<Pointer>::template uses<missing>::which_has_a_wire_form,          \
      "LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form " \
      "(T::m and the type are named beside this message): " text)
    LP_DETAIL_NO_WIRE_FORM(refused_key, LP_DETAIL_WHY_KEY);
    LP_DETAIL_NO_WIRE_FORM(refused_variant, LP_DETAIL_WHY_VARIANT);
    LP_DETAIL_NO_WIRE_FORM(refused_container, LP_DETAIL_WHY_CONTAINER);
    LP_DETAIL_NO_WIRE_FORM(refused_text, LP_DETAIL_WHY_TEXT);
    LP_DETAIL_NO_WIRE_FORM(refused_pointer, LP_DETAIL_WHY_POINTER);
    LP_DETAIL_NO_WIRE_FORM(refused_base, LP_DETAIL_WHY_BASE);
    LP_DETAIL_NO_WIRE_FORM(refused_uncounted, LP_DETAIL_WHY_UNCOUNTED);
    LP_DETAIL_NO_WIRE_FORM(refused_too_many, LP_DETAIL_WHY_TOO_MANY);
    LP_DETAIL_NO_WIRE_FORM(refused_unaddressed, LP_DETAIL_WHY_UNADDRESSED);
    LP_DETAIL_NO_WIRE_FORM(refused_unnamed, LP_DETAIL_WHY_UNNAMED);
    LP_DETAIL_NO_WIRE_FORM(none, LP_DETAIL_WHY_NONE);
#undef LP_DETAIL_NO_WIRE_FORM
    return false;
  } else if constexpr (!codec_in_reach<nlohmann_part_of<traits>>) {
    static_assert(
        method<Pointer>::template uses<nlohmann_part_of<traits>>::whose_codec_is_included,
        "LP_SERVICE(T, m): a parameter or the return type of T::m crosses the wire "
        "through nlohmann_json (T::m and the type are named beside this "
        "message): " LP_DETAIL_WHY_JSON_HEADER ", above LP_SERVICE");
    return false;
  } else if constexpr (!traits::params_by_value) {
    using reference = typename first_by_reference<typename traits::declared_params>::type;
    static_assert(
        method<Pointer>::template takes<reference>::by_value_or_const_reference,
        "LP_SERVICE(T, m): T::m takes a parameter by non-const reference (T::m and the "
        "type are named beside this message), but a remote caller's argument is a copy; "
        "take it by value or const reference and return the result");
    return false;
  } else {
    static_assert(
        listed<Descriptor>::template has_a_name_of_its_own_in<::lp::client<T>>,
        "LP_SERVICE(T, m): lp::client uses the name m itself (T and m are named beside "
        "this message; async, node and with_deadline are taken); rename the method");
    return true;
  }
}

// A checkpoint of a service: `State lp_save() const` and
// `void lp_restore(State)` (docs/launching.md, "Fault tolerance").
template <class T>
concept saves_state = requires(const T& node) {
  node.lp_save();
};
template <class T>
concept names_restore = requires {
  &T::lp_restore;
};
template <class T>
concept restores_saved_state = requires(T& node, const T& saved) {
  node.lp_restore(saved.lp_save());
};

// The names the checkpoint checks print beside their messages.
template <class T>
struct checkpoint_of {
  static constexpr bool has_both_lp_save_and_lp_restore =
      saves_state<T> == names_restore<T>;
  static constexpr bool restores_what_lp_save_returns = restores_saved_state<T>;
  template <class State>
  struct state {
    static constexpr bool has_a_wire_form = wire_type<State>;
  };
};

template <class T>
constexpr bool check_checkpoint() {
  if constexpr (!saves_state<T> && !names_restore<T>) {
    return true;
  } else if constexpr (saves_state<T> != names_restore<T>) {
    static_assert(
        checkpoint_of<T>::has_both_lp_save_and_lp_restore,
        "LP_SERVICE(T): T has only half of a checkpoint (T is named beside this "
        "message); a service whose state survives restarts has both "
        "`State lp_save() const` and `void lp_restore(State)`");
    return false;
  } else if constexpr (!restores_saved_state<T>) {
    static_assert(
        checkpoint_of<T>::restores_what_lp_save_returns,
        "LP_SERVICE(T): T::lp_restore cannot take what T::lp_save() returns (T is "
        "named beside this message); declare `State lp_save() const` and "
        "`void lp_restore(State)` with the same State");
    return false;
  } else {
    using State = std::decay_t<decltype(std::declval<const T&>().lp_save())>;
    static_assert(
        checkpoint_of<T>::template state<State>::has_a_wire_form,
        "LP_SERVICE(T): the State that T::lp_save() returns has no wire form (T and "
        "State are named beside this message); checkpoints are written in CBOR: use "
        "a type a service method could return");
    return true;
  }
}

// LP_SERVICE(T, methods...) as a whole. Returns true whatever it finds, so
// that the static_assert that asks adds no message of its own.
template <class T, class... Descriptor>
constexpr bool check_service() {
  static_assert(std::is_class_v<T>,
                "LP_SERVICE(T, ...): a service must be a struct or class");
  if constexpr (std::is_class_v<T>) {
    (check_method<T, Descriptor>(), ...);
    check_checkpoint<T>();
  }
  return true;
}

// LP_BATCHED(T, m, max_batch, max_wait); true whatever it finds, as above.
template <class Descriptor, long long MaxBatch, auto Pointer = Descriptor::pointer>
constexpr bool check_batched() {
  static_assert(batched<Pointer>::template max_batch<MaxBatch>::is_at_least_one,
                "LP_BATCHED(T, m, max_batch, max_wait): max_batch must be at least 1");
  static_assert(
      batched<Pointer>::takes_vectors_and_returns_a_vector_or_void,
      "LP_BATCHED(T, m, ...): a batched method takes a std::vector for every parameter "
      "(one element per call) and returns a std::vector with one result per call, or "
      "void");
  return true;
}

}  // namespace lp::detail
