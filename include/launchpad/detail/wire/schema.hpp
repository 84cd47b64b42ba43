#pragma once

// What /lp/v1/describe says of each parameter and result type: its schema,
// a tree that follows the wire kinds (kind.hpp) and says what a value of the
// type looks like on the wire: an integer's width and sign, a sequence's
// element, a map's value, a struct's members ... (docs/protocol.md,
// "Introspection", lists every kind). Clients build their checks from it, so
// it must not depend on how a compiler spells a type: the spelling rides
// along for people reading describe, and nothing reads it.
//
// The tree is built at compile time: schema_of<T>::value is a constant
// (constinit) with pointers to its parts' schemas, so a service's types cost
// its translation unit data, not code. A struct that holds itself (through a
// std::vector, an optional ...) points back at its own schema; the JSON
// writer, compiled once, cuts such a loop (schema_json).

#include <array>
#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/util/type_name.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail {

struct type_schema;

// A member of a struct (a record): its name and its type's schema.
struct field_schema {
  std::string_view name;
  const type_schema* schema;
};

struct type_schema {
  // One of the kinds of docs/protocol.md: "boolean", "integer", "floating",
  // "enumeration", "string", "optional", "typed_array", "sequence", "map",
  // "tuple", "struct", "tensor", "json", "nlohmann", and "void" for a
  // method that returns nothing.
  std::string_view kind;
  std::string_view spelling;  // type_spelling<T>: for people only
  std::size_t bits = 0;       // integer, floating, enumeration (its integer's)
  bool is_signed = false;     // integer, enumeration
  bool fixed_size = false;    // std::array: exactly `size` items
  std::size_t size = 0;
  bool unique = false;                          // std::set: repeated items are kept once
  const type_schema* element = nullptr;         // typed_array, sequence, tensor
  const type_schema* key = nullptr;             // map
  const type_schema* value = nullptr;           // map, optional
  std::span<const type_schema* const> items{};  // tuple, in order
  std::span<const field_schema> fields{};       // struct, in declaration order
};

// The schema of T (void too), a constant; defined below.
template <class T>
struct schema_of {
  static const type_schema value;
};

template <class T>
struct tuple_schemas;
template <class... E>
struct tuple_schemas<std::tuple<E...>> {
  static constexpr std::array<const type_schema*, sizeof...(E)> value{
      &schema_of<E>::value...};
};

template <class S, class Types = member_types<S>>
struct aggregate_field_schemas;
template <class S, class... F>
struct aggregate_field_schemas<S, std::tuple<F...>> {
  static constexpr auto value = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<field_schema, sizeof...(F)>{
        field_schema{aggregate_fields<S>::names[I], &schema_of<F>::value}...};
  }
  (std::index_sequence_for<F...>{});
};

template <class S>
constexpr auto struct_field_schemas() {
  if constexpr (hana_struct<S>)
    return boost::hana::unpack(boost::hana::accessors<S>(), [](auto... member) {
      return std::array<field_schema, sizeof...(member)>{
          field_schema{boost::hana::to<const char*>(boost::hana::first(member)),
                       &schema_of<std::remove_cvref_t<decltype(boost::hana::second(
                           member)(std::declval<S&>()))>>::value}...};
    });
  else
    return aggregate_field_schemas<S>::value;
}

template <class S>
struct struct_fields {
  static constexpr auto value = struct_field_schemas<S>();
};

// An integer's or an enum's integer: its width and sign.
template <class T, class Integer>
constexpr type_schema integer_schema(std::string_view kind) {
  return {.kind = kind,
          .spelling = type_spelling<T>,
          .bits = 8 * sizeof(Integer),
          .is_signed = std::is_signed_v<Integer>};
}

// A std::vector, std::array or std::set (or a typed array, one of numbers).
template <class T>
constexpr type_schema items_schema(std::string_view kind) {
  type_schema out{.kind = kind,
                  .spelling = type_spelling<T>,
                  .element = &schema_of<typename T::value_type>::value};
  if constexpr (is_std_array<T>) {
    out.fixed_size = true;
    out.size = std::tuple_size_v<T>;
  }
  out.unique = is_std_set<T>;
  return out;
}

// Each kind has its branch; the last one stops the build for a kind added
// to kind.hpp and forgotten here, as the codecs' do.
template <class T>
constexpr type_schema make_schema() {
  constexpr auto kind = wire_kind_of<T>;
  if constexpr (!has_wire_form<T>) {
    explain_wire_type<T>();
    return {};
  } else if constexpr (kind == wire_kind::boolean) {
    return {.kind = protocol::kind::boolean, .spelling = type_spelling<T>};
  } else if constexpr (kind == wire_kind::integer) {
    return integer_schema<T, T>(protocol::kind::integer);
  } else if constexpr (kind == wire_kind::floating) {
    return {.kind = protocol::kind::floating,
            .spelling = type_spelling<T>,
            .bits = 8 * sizeof(T)};
  } else if constexpr (kind == wire_kind::enumeration) {
    return integer_schema<T, std::underlying_type_t<T>>(protocol::kind::enumeration);
  } else if constexpr (kind == wire_kind::string) {
    return {.kind = protocol::kind::string, .spelling = type_spelling<T>};
  } else if constexpr (kind == wire_kind::optional) {
    return {.kind = protocol::kind::optional,
            .spelling = type_spelling<T>,
            .value = &schema_of<typename T::value_type>::value};
  } else if constexpr (kind == wire_kind::typed_array) {
    return items_schema<T>(protocol::kind::typed_array);
  } else if constexpr (kind == wire_kind::sequence) {
    return items_schema<T>(protocol::kind::sequence);
  } else if constexpr (kind == wire_kind::map) {
    return {.kind = protocol::kind::map,
            .spelling = type_spelling<T>,
            .key = &schema_of<typename T::key_type>::value,
            .value = &schema_of<typename T::mapped_type>::value};
  } else if constexpr (kind == wire_kind::tuple) {
    return {.kind = protocol::kind::tuple,
            .spelling = type_spelling<T>,
            .items = tuple_schemas<typename tuple_elements<T>::type>::value};
  } else if constexpr (kind == wire_kind::record) {
    return {.kind = protocol::kind::record,
            .spelling = type_spelling<T>,
            .fields = struct_fields<T>::value};
  } else if constexpr (kind == wire_kind::tensor) {
    // A tensor's shape is a value, not part of its type: the schema has none.
    return {.kind = protocol::kind::tensor,
            .spelling = type_spelling<T>,
            .element = &schema_of<typename T::value_type>::value};
  } else if constexpr (kind == wire_kind::json) {
    return {.kind = protocol::kind::json, .spelling = type_spelling<T>};
  } else if constexpr (kind == wire_kind::nlohmann) {
    // Its own to_json says what it looks like; only its name is known here.
    return {.kind = protocol::kind::nlohmann, .spelling = type_spelling<T>};
  } else {
    static_assert(unhandled_kind<T>, "make_schema has no case for this wire kind");
  }
}

template <class T>
constinit const type_schema schema_of<T>::value = make_schema<std::remove_cv_t<T>>();

// What a void method returns.
template <>
inline constinit const type_schema schema_of<void>::value = {
    .kind = protocol::kind::nothing, .spelling = "void"};

// The schemas of a method's result and then of each parameter, for
// describe: one array per signature, a constant.
template <class Result, class Params>
struct signature_schemas;
template <class Result, class... P>
struct signature_schemas<Result, std::tuple<P...>> {
  static constexpr std::array<const type_schema*, 1 + sizeof...(P)> value{
      &schema_of<Result>::value, &schema_of<P>::value...};
};

// A schema as describe writes it (docs/protocol.md, "Introspection"). A
// struct met again inside itself is written as {"kind": "struct", "type":
// ..., "recursive": n}: the n-th struct around it, counting out from 1.
LP_API nlohmann::json schema_json(const type_schema& schema);

}  // namespace lp::detail
