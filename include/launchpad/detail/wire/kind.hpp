#pragma once

// The wire-type model: one classification of C++ types, wire_kind_of<T>,
// that every codec switches on (cbor_encode.hpp writes, cbor_decode.hpp
// reads; JSON goes through them, json_encode.hpp and json_decode.hpp), and
// has_wire_form, the types a service method may take or return (users know
// it as lp::wire_type, <launchpad/wire.hpp>). The kinds are listed in
// docs/protocol.md ("Values"). To add a kind: classify it here, then give it
// a case in cbor::write and in the typed reader; each ends with a
// static_assert, so a kind either forgets does not compile.
//
// Also here: the one walk over the members of a struct, Hana's or a plain
// aggregate (for_each_member, member_types; aggregate.hpp names a plain
// one's fields), and, for a type that is not a wire type, the compile-time
// message that says why (wire_diagnosis).

#include <array>
#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <cstdint>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/aggregate.hpp>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace lp {
template <class T>
class tensor;
}  // namespace lp

namespace lp::detail {

// Makes tensors that read their values in place (tensor.hpp).
template <class T>
struct tensor_access;

// nlohmann's JSON value, the json kind (lp::json, <launchpad/wire.hpp>).
using json = nlohmann::json;

// The element types that pack into a typed array (RFC 8746): every
// arithmetic type but bool, whose std::vector is not contiguous.
template <class T>
concept packable =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) &&
    (std::is_integral_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>);

template <class T>
concept hana_struct = std::is_class_v<T> && boost::hana::Struct<T>::value;

// ---- The one walk over a struct's members ------------------------------
// (a record: a Hana struct, or a plain aggregate whose fields the compiler
// names)

// Calls f(name, member) for each member of `value` (const or not), in
// declaration order; `name` is a const char*.
template <class S, class F>
void for_each_member(S& value, F&& f) {
  if constexpr (hana_struct<std::remove_const_t<S>>)
    boost::hana::for_each(boost::hana::accessors<std::remove_const_t<S>>(),
                          [&](auto member) {
                            f(boost::hana::to<const char*>(boost::hana::first(member)),
                              boost::hana::second(member)(value));
                          });
  else
    aggregate_fields<std::remove_const_t<S>>::for_each(value, f);
}

template <class T>
constexpr std::size_t count_members() {
  if constexpr (hana_struct<T>)
    return decltype(boost::hana::length(boost::hana::accessors<T>()))::value;
  else
    return aggregate_fields<T>::count;
}
template <class T>
inline constexpr std::size_t member_count = count_members<T>();

template <class T>
constexpr auto member_types_of() {
  if constexpr (hana_struct<T>)
    return boost::hana::unpack(boost::hana::accessors<T>(), [](auto... member) {
      return std::type_identity<std::tuple<std::remove_cvref_t<
          decltype(boost::hana::second(member)(std::declval<T&>()))>...>>{};
    });
  else
    return std::type_identity<typename aggregate_fields<T>::types>{};
}

// The members' types, as a std::tuple.
template <class T>
using member_types = typename decltype(member_types_of<T>())::type;

// ---- Shapes of standard types --------------------------------------------

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <class T>
inline constexpr bool is_std_vector = false;
template <class E, class A>
inline constexpr bool is_std_vector<std::vector<E, A>> = true;

template <class T>
inline constexpr bool is_std_array = false;
template <class E, std::size_t N>
inline constexpr bool is_std_array<std::array<E, N>> = true;

template <class T>
inline constexpr bool is_std_set = false;
template <class E, class C, class A>
inline constexpr bool is_std_set<std::set<E, C, A>> = true;

// std::map and std::unordered_map, whatever their key.
template <class T>
inline constexpr bool is_std_map = false;
template <class K, class V, class C, class A>
inline constexpr bool is_std_map<std::map<K, V, C, A>> = true;
template <class K, class V, class H, class E, class A>
inline constexpr bool is_std_map<std::unordered_map<K, V, H, E, A>> = true;

template <class T>
inline constexpr bool is_tuple_like = false;
template <class... E>
inline constexpr bool is_tuple_like<std::tuple<E...>> = true;
template <class A, class B>
inline constexpr bool is_tuple_like<std::pair<A, B>> = true;

template <class T>
inline constexpr bool is_variant = false;
template <class... E>
inline constexpr bool is_variant<std::variant<E...>> = true;

template <class T>
inline constexpr bool is_tensor = false;
template <class T>
inline constexpr bool is_tensor<tensor<T>> = true;

// Text of another kind than std::string: views, wide strings, ...
template <class T>
inline constexpr bool is_other_text = false;
template <class C, class Tr, class A>
inline constexpr bool is_other_text<std::basic_string<C, Tr, A>> = true;
template <class C, class Tr>
inline constexpr bool is_other_text<std::basic_string_view<C, Tr>> = true;

// std::valarray, known by members no other type has together, so that
// its header (a third of a second of every build) stays out.
template <class T>
concept valarray_like = requires(const T& value) {
  typename T::value_type;
  value.cshift(1);
  value.sum();
};

template <class T>
concept range_like = requires(const T& value) {
  typename T::value_type;
  value.begin();
  value.end();
};

// A type with its own to_json and from_json (NLOHMANN_DEFINE_TYPE_*,
// NLOHMANN_JSON_SERIALIZE_ENUM, or written by hand), found as nlohmann finds
// them: by argument-dependent lookup.
namespace json_probe {
void to_json() = delete;
void from_json() = delete;
// Stands in for lp::json in the probe. Since nlohmann_json 3.11.3 json has
// a base class in nlohmann::detail, so a lookup with json itself also finds
// nlohmann's own conversions (of enums, std::deque, ...); with this, only
// those of T's namespaces and friends are found.
struct json_like {
  operator json&();
  operator const json&() const;
};
template <class T>
concept own_conversion = requires(json_like& j, const json_like& in, const T& value,
                                  T& out) {
  to_json(j, value);
  from_json(in, out);
};
}  // namespace json_probe

// (J is lp::json; a parameter, so that the check waits for a use, by which
// time <launchpad/json.hpp> may have made it a complete type.)
template <class T, class J>
concept nlohmann_convertible_as = requires(J& j, const T& value) {
  j = value;
  j.template get<T>();
};
template <class T>
concept nlohmann_convertible = nlohmann_convertible_as<T, json>;

// How the json and nlohmann kinds cross: defined by <launchpad/json.hpp>,
// the only header that brings in nlohmann's. A codec that meets either kind
// without it says to include it (LP_DETAIL_WHY_JSON_HEADER).
template <class T>
struct json_codec;

template <class T>
concept json_codec_defined = requires {
  sizeof(json_codec<T>);
};
// (A constant rather than the concept in static_asserts: a failed concept
// adds a page of notes to the one message.)
template <class T>
inline constexpr bool json_codec_included = json_codec_defined<T>;

#define LP_DETAIL_WHY_JSON_HEADER                                                      \
  "lp::json, and types with their own to_json/from_json, cross the wire through "      \
  "nlohmann_json: add #include <launchpad/json.hpp> (it brings in nlohmann's header, " \
  "which launchpad.hpp leaves out to keep your builds fast)"

// ---- The kinds -----------------------------------------------------------

enum class wire_kind {
  // Types that cross the wire (docs/protocol.md, "Values").
  boolean,      // bool
  integer,      // every other integral type (char too)
  floating,     // float, double, long double (as a float64)
  enumeration,  // an enum without its own to_json: its underlying integer
  string,       // std::string, UTF-8
  optional,     // std::optional<T>: null or the T
  typed_array,  // std::vector<N>, std::array<N, n> of a packable number N
  sequence,     // std::vector<T>, std::array<T, n>, std::set<T>
  map,          // std::map, std::unordered_map with std::string keys
  tuple,        // std::pair, std::tuple
  record,       // BOOST_HANA_DEFINE_STRUCT, or a plain aggregate (aggregate.hpp)
  tensor,       // lp::tensor<N>
  json,         // lp::json: any value, unchecked
  nlohmann,     // a type with its own to_json/from_json (nlohmann's rules)
  // Types that do not, each with its reason (wire_diagnosis below).
  refused_key,        // a map whose key is not std::string
  refused_variant,    // std::variant
  refused_container,  // any other container: std::deque, std::list, C arrays, ...
  refused_text,       // std::string_view, std::wstring, ...
  refused_pointer,    // pointers and references
  // Plain aggregates whose fields the compiler cannot name (aggregate_refusal).
  refused_base,         // with a base class
  refused_uncounted,    // a C array, a field without a default value
  refused_too_many,     // more than most_aggregate_fields fields
  refused_unaddressed,  // a bit-field or a reference field
  refused_unnamed,      // a compiler whose spelling of a field is unknown
  none,                 // anything else
};

// The wire kind of a class aggregate: a record, or why its fields cannot be
// named.
template <class T>
constexpr wire_kind aggregate_kind() {
  switch (aggregate_refusal_of<T>) {
    case aggregate_refusal::none:
      return wire_kind::record;
    case aggregate_refusal::base:
      return wire_kind::refused_base;
    case aggregate_refusal::uncounted:
      return wire_kind::refused_uncounted;
    case aggregate_refusal::too_many:
      return wire_kind::refused_too_many;
    case aggregate_refusal::unaddressed:
      return wire_kind::refused_unaddressed;
    case aggregate_refusal::unnamed:
      return wire_kind::refused_unnamed;
  }
  return wire_kind::none;
}

// The kind of a struct the wire reads and writes itself: a record, or a
// plain aggregate it refuses.
constexpr bool struct_kind(wire_kind kind) {
  return kind == wire_kind::record ||
         (kind >= wire_kind::refused_base && kind <= wire_kind::refused_unnamed);
}

template <class T>
constexpr wire_kind classify() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_reference_v<T> || std::is_pointer_v<U> ||
                std::is_member_pointer_v<U>)
    return wire_kind::refused_pointer;
  else if constexpr (std::is_same_v<U, bool>)
    return wire_kind::boolean;
  else if constexpr (std::is_integral_v<U> && sizeof(U) <= 8)
    return wire_kind::integer;
  else if constexpr (std::is_floating_point_v<U>)
    return wire_kind::floating;
  else if constexpr (std::is_same_v<U, std::string>)
    return wire_kind::string;
  else if constexpr (is_tensor<U>)
    return wire_kind::tensor;
  else if constexpr (std::is_same_v<U, json>)
    return wire_kind::json;
  else if constexpr (is_optional<U>)
    return wire_kind::optional;
  else if constexpr (is_std_vector<U> || is_std_array<U>) {
    using element = typename U::value_type;
    if constexpr (packable<element> && !is_std_vector<U>)
      return wire_kind::typed_array;
    else if constexpr (packable<element>)
      return std::is_same_v<U, std::vector<element>> ? wire_kind::typed_array
                                                     : wire_kind::sequence;
    else
      return wire_kind::sequence;
  } else if constexpr (is_std_set<U>)
    return wire_kind::sequence;
  else if constexpr (is_std_map<U>)
    return std::is_same_v<typename U::key_type, std::string> ? wire_kind::map
                                                             : wire_kind::refused_key;
  else if constexpr (is_tuple_like<U>)
    return wire_kind::tuple;
  else if constexpr (hana_struct<U>)
    return wire_kind::record;
  else if constexpr (json_probe::own_conversion<U>)
    return wire_kind::nlohmann;
  else if constexpr (std::is_enum_v<U>)
    return wire_kind::enumeration;
  else if constexpr (is_variant<U>)
    return wire_kind::refused_variant;
  else if constexpr (is_other_text<U>)
    return wire_kind::refused_text;
  else if constexpr (std::is_array_v<U> || valarray_like<U> || range_like<U>)
    return wire_kind::refused_container;
  else if constexpr (class_aggregate<U>)
    return aggregate_kind<U>();
  else if constexpr (std::is_object_v<U> && nlohmann_convertible<U>)
    return wire_kind::nlohmann;  // e.g. an adl_serializer specialization
  else
    return wire_kind::none;
}

// The kind of T (cv-qualifiers aside). Only the outer type: whether its
// parts cross too is has_wire_form's question.
template <class T>
inline constexpr wire_kind wire_kind_of = classify<T>();

constexpr bool crosses(wire_kind kind) {
  return kind < wire_kind::refused_key;
}

// ---- Tensor shapes ---------------------------------------------------------

// The number of values of a shape; SIZE_MAX for one too large to hold.
inline std::size_t shape_count(const std::vector<std::size_t>& shape) {
  std::size_t total = 1;
  for (auto dimension : shape)
    if (__builtin_mul_overflow(total, dimension, &total)) return SIZE_MAX;
  return total;
}

// A shape as messages write it: [2, 3].
LP_API std::string shape_text(const std::vector<std::size_t>& shape);

// ---- Which types cross, and if not, why ----------------------------------

template <class... T>
struct type_list {};

template <class T>
struct tuple_elements;
template <class... E>
struct tuple_elements<std::tuple<E...>> {
  using type = std::tuple<E...>;
};
template <class A, class B>
struct tuple_elements<std::pair<A, B>> {
  using type = std::tuple<A, B>;
};

// The first of T and the types it holds whose kind Wanted picks, or void.
// Seen lists the structs being looked into, so that a recursive type
// (a struct holding a std::vector of itself) ends the search.
template <class T, class Seen, class Wanted>
struct part_of_kind;

template <class Seen, class Wanted, class Tuple>
struct first_part_of_kind {
  using type = void;
};
template <class Seen, class Wanted, class Head, class... Tail>
struct first_part_of_kind<Seen, Wanted, std::tuple<Head, Tail...>> {
  using head = typename part_of_kind<Head, Seen, Wanted>::type;
  using type = std::conditional_t<
      std::is_void_v<head>,
      typename first_part_of_kind<Seen, Wanted, std::tuple<Tail...>>::type, head>;
};

template <class T, class... Seen, class Wanted>
struct part_of_kind<T, type_list<Seen...>, Wanted> {
  static auto find() {
    using U = std::remove_cv_t<T>;
    using seen = type_list<Seen...>;
    constexpr auto kind = wire_kind_of<T>;
    if constexpr (Wanted::picks(kind))
      return std::type_identity<T>{};
    else if constexpr (!crosses(kind))
      return std::type_identity<void>{};
    else if constexpr (kind == wire_kind::optional || kind == wire_kind::sequence)
      return std::type_identity<
          typename part_of_kind<typename U::value_type, seen, Wanted>::type>{};
    else if constexpr (kind == wire_kind::map)
      return std::type_identity<
          typename part_of_kind<typename U::mapped_type, seen, Wanted>::type>{};
    else if constexpr (kind == wire_kind::tuple)
      return std::type_identity<typename first_part_of_kind<
          seen, Wanted, typename tuple_elements<U>::type>::type>{};
    else if constexpr (kind == wire_kind::record && !(std::is_same_v<U, Seen> || ...))
      return std::type_identity<typename first_part_of_kind<type_list<Seen..., U>, Wanted,
                                                            member_types<U>>::type>{};
    else
      return std::type_identity<void>{};
  }
  using type = typename decltype(find())::type;
};

struct refused_kinds {
  static constexpr bool picks(wire_kind kind) { return !crosses(kind); }
};
struct nlohmann_kinds {
  static constexpr bool picks(wire_kind kind) {
    return kind == wire_kind::json || kind == wire_kind::nlohmann;
  }
};

// The innermost type in T that does not cross (the variant in a
// std::vector<std::variant<...>>), or void.
template <class T>
using wire_offender = typename part_of_kind<T, type_list<>, refused_kinds>::type;

// Why a type of each refused kind has no wire form, and what to use: the
// text of wire_diagnosis and of LP_SERVICE's message (service_checks.hpp).
// (Macros: a static_assert message must be a literal.)
#define LP_DETAIL_WHY_KEY                                                           \
  "a map crosses the wire as an object, whose keys are text: use std::string keys " \
  "(std::map<std::string, V>, std::unordered_map<std::string, V>) or a "            \
  "std::vector<std::pair<K, V>>"
#define LP_DETAIL_WHY_VARIANT                                                       \
  "std::variant has no wire form (nothing on the wire would say which alternative " \
  "it holds): use a struct with one std::optional field per alternative"
#define LP_DETAIL_WHY_CONTAINER                                                    \
  "this container has no wire form: use std::vector (of numbers: a typed array), " \
  "std::array, std::set, or std::map/std::unordered_map with std::string keys"
#define LP_DETAIL_WHY_TEXT                                                          \
  "text crosses the wire as std::string (UTF-8): use std::string, not a view or a " \
  "string of another character type"
#define LP_DETAIL_WHY_POINTER \
  "a pointer or reference has no wire form: pass the value itself"
#define LP_DETAIL_WHY_BASE                                                            \
  "the compiler names the fields of a plain struct only when they are all its own, "  \
  "and this one has a base class: make the base a field, or declare the struct with " \
  "BOOST_HANA_DEFINE_STRUCT"
#define LP_DETAIL_WHY_UNCOUNTED                                                       \
  "the compiler cannot count the fields of this struct: one is a C array (use "       \
  "std::array), a reference (hold the value itself), or of a type without a default " \
  "constructor (a wire type is built empty, then read)"
#define LP_DETAIL_WHY_TOO_MANY                                                      \
  "the compiler names the fields of a plain struct of at most 64 fields, and this " \
  "one has more: group them into nested structs, or declare it with "               \
  "BOOST_HANA_DEFINE_STRUCT"
#define LP_DETAIL_WHY_UNADDRESSED                                                      \
  "the compiler names a field by its address, and a field of this struct has none: a " \
  "bit-field (use a whole integer or bool) or a reference (hold the value itself)"
#define LP_DETAIL_WHY_UNNAMED                                                        \
  "this compiler does not give the names of a struct's fields (g++ 12 or later and " \
  "clang++ 14 or later do): declare the struct with BOOST_HANA_DEFINE_STRUCT"
#define LP_DETAIL_WHY_NONE                                                              \
  "this type has no wire form: make it a plain struct (public fields, no "              \
  "constructors, no base class), declare it with BOOST_HANA_DEFINE_STRUCT, or give it " \
  "to_json/from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE)"

// Instantiated for a type that does not cross (the innermost one: the
// variant in a std::vector<std::variant<...>>), it stops the build with the
// reason; the compiler's note names the type.
template <class Offender>
struct wire_diagnosis {
  static constexpr wire_kind kind = wire_kind_of<Offender>;
  static_assert(kind != wire_kind::refused_key, "lp wire type: " LP_DETAIL_WHY_KEY);
  static_assert(kind != wire_kind::refused_variant,
                "lp wire type: " LP_DETAIL_WHY_VARIANT);
  static_assert(kind != wire_kind::refused_container,
                "lp wire type: " LP_DETAIL_WHY_CONTAINER);
  static_assert(kind != wire_kind::refused_text, "lp wire type: " LP_DETAIL_WHY_TEXT);
  static_assert(kind != wire_kind::refused_pointer,
                "lp wire type: " LP_DETAIL_WHY_POINTER);
  static_assert(kind != wire_kind::refused_base, "lp wire type: " LP_DETAIL_WHY_BASE);
  static_assert(kind != wire_kind::refused_uncounted,
                "lp wire type: " LP_DETAIL_WHY_UNCOUNTED);
  static_assert(kind != wire_kind::refused_too_many,
                "lp wire type: " LP_DETAIL_WHY_TOO_MANY);
  static_assert(kind != wire_kind::refused_unaddressed,
                "lp wire type: " LP_DETAIL_WHY_UNADDRESSED);
  static_assert(kind != wire_kind::refused_unnamed,
                "lp wire type: " LP_DETAIL_WHY_UNNAMED);
  static_assert(kind != wire_kind::none, "lp wire type: " LP_DETAIL_WHY_NONE);
  static constexpr bool value = false;
};

// What may cross the wire: every parameter and the result of a service
// method (void too). The kinds of wire_kind_of, all the way down; a struct
// crosses when its members do.
template <class T>
concept has_wire_form = std::is_void_v<T> || std::is_void_v<wire_offender<T>>;

// Stops the build with the reason T is not a wire type (wire_diagnosis), in
// the branch a codec takes for such a T: `if constexpr (has_wire_form<T>) ...
// else explain_wire_type<T>();`, so that the codec adds no errors of its own.
// Not from a constant evaluation: clang then also refuses the evaluation.
template <class T>
constexpr void explain_wire_type() {
  if constexpr (!has_wire_form<T>) (void)sizeof(wire_diagnosis<wire_offender<T>>);
}

// For the last branch of a codec's switch on the kind: a kind it has no case
// for is a compile error there.
template <class T>
inline constexpr bool unhandled_kind = false;

}  // namespace lp::detail
