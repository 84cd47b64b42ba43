#pragma once

// Plain aggregates as wire records, with no macro: a struct with public
// fields, no constructors and no base class crosses the wire as a
// BOOST_HANA_DEFINE_STRUCT struct does, an object keyed by its fields'
// names, which the compiler gives:
//
// - the fields are counted by aggregate initialization, T{a, b, c} from
//   values that convert to anything, and the count checked with T{{}, {},
//   {}}, in which a brace initializes a whole field (a C array too);
// - they are bound by a structured binding, `auto& [f0, f1, f2] = object`,
//   written out below for each count up to most_aggregate_fields;
// - each field's name is read from __PRETTY_FUNCTION__ of a function whose
//   template argument points at the field in an object never built
//   (field_name.hpp holds what is compiler-specific).
//
// What the compiler cannot name is refused, each case with its reason
// (aggregate_refusal; kind.hpp gives each a wire kind and a message). None
// of it is compiled for a file that passes no plain struct: a type is
// first asked whether it is a class aggregate, which the compiler knows
// for free. What every file pays is reading this header, kept short for
// it (benchmarks/README.md, "Compile cost").

#include <array>
#include <cstddef>
#include <launchpad/detail/wire/field_name.hpp>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

// The most fields of a plain struct on the wire; a larger one is declared
// with BOOST_HANA_DEFINE_STRUCT (or holds nested structs).
inline constexpr std::size_t most_aggregate_fields = 64;

// A class aggregate: public fields, no user-declared constructors, no
// virtual functions (a union is no class).
template <class T>
concept class_aggregate = std::is_class_v<T> && std::is_aggregate_v<T>;

// An object of T that is never built: the addresses of its fields, taken
// at compile time, name them. Only declared, so that no program holds it
// (a definition would be built and destroyed at run time with each
// program that names a field), and named only in immediate functions,
// which generate no code. In a struct of its own: a declared object of a
// type local to a function is an error, of a struct holding it not.
// clang++ warns of both declarations all the same, which is the point here.
template <class T>
struct object_of {
  T value;
};
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-var-template"
#pragma clang diagnostic ignored "-Wundefined-internal"
#endif
template <class T>
extern const object_of<T> unbuilt_object;

// Converts to any type: a field of T{a, b, c}, whatever its type (a
// field that cannot be moved too). (Not an aggregate itself.)
struct any_field {
  any_field() = default;
  template <class X>
  operator X() const;
};

// Converts to any type as an lvalue: a reference field, which no value binds.
struct any_lvalue {
  any_lvalue() = default;
  template <class X>
  operator X&() const;
};

// Converts only to T's base classes: T{any_base_of<T>{}} compiles when T
// has a base, which its first initializer initializes.
template <class T>
struct any_base_of {
  any_base_of() = default;
  template <class B>
  requires(std::is_base_of_v<B, T> && !std::is_same_v<B, T>) operator B&() const;
};

// The types of the fields f(field...) is called with, cv-qualifiers aside
// (declared only: for decltype).
struct field_types {
  template <class... F>
  std::tuple<std::remove_cv_t<F>...> operator()(F&...) const;
};

// The N fields of a struct, for N from 0 to most_aggregate_fields:
//   fits<T>: T{{}, ... N braces} compiles;
//   apply(object, f): f(field...), each field an lvalue.
template <std::size_t N>
struct fields_of;

template <>
struct fields_of<0> {
  template <class T>
  static constexpr bool fits = requires {
    T{};
  };
  template <class T, class F>
  static constexpr decltype(auto) apply(T&, F&& f) {
    return std::forward<F>(f)();
  }
};

// The lists below: LP_DETAIL_FIELDS_3(m, s) is m(lp_f0) s() m(lp_f1) s() m(lp_f2).
#define LP_DETAIL_FIELD_NAME(field) field
#define LP_DETAIL_FIELD_BRACES(field) \
  {}
#define LP_DETAIL_FIELD_COMMA() ,
#define LP_DETAIL_FIELD_LIST(n, m, s) LP_DETAIL_FIELDS_##n(m, s)

#define LP_DETAIL_FIELDS_OF(n)                                                       \
  template <>                                                                        \
  struct fields_of<n> {                                                              \
    template <class T>                                                               \
    static constexpr bool fits = requires {                                          \
      T{LP_DETAIL_FIELD_LIST(n, LP_DETAIL_FIELD_BRACES, LP_DETAIL_FIELD_COMMA)};     \
    };                                                                               \
    template <class T, class F>                                                      \
    static constexpr decltype(auto) apply(T& object, F&& f) {                        \
      auto& [LP_DETAIL_FIELD_LIST(n, LP_DETAIL_FIELD_NAME, LP_DETAIL_FIELD_COMMA)] = \
          object;                                                                    \
      return std::forward<F>(f)(                                                     \
          LP_DETAIL_FIELD_LIST(n, LP_DETAIL_FIELD_NAME, LP_DETAIL_FIELD_COMMA));     \
    }                                                                                \
  };

#define LP_DETAIL_FIELDS_1(m, s) m(lp_f0)
#define LP_DETAIL_FIELDS_2(m, s) LP_DETAIL_FIELDS_1(m, s) s() m(lp_f1)
#define LP_DETAIL_FIELDS_3(m, s) LP_DETAIL_FIELDS_2(m, s) s() m(lp_f2)
#define LP_DETAIL_FIELDS_4(m, s) LP_DETAIL_FIELDS_3(m, s) s() m(lp_f3)
#define LP_DETAIL_FIELDS_5(m, s) LP_DETAIL_FIELDS_4(m, s) s() m(lp_f4)
#define LP_DETAIL_FIELDS_6(m, s) LP_DETAIL_FIELDS_5(m, s) s() m(lp_f5)
#define LP_DETAIL_FIELDS_7(m, s) LP_DETAIL_FIELDS_6(m, s) s() m(lp_f6)
#define LP_DETAIL_FIELDS_8(m, s) LP_DETAIL_FIELDS_7(m, s) s() m(lp_f7)
#define LP_DETAIL_FIELDS_9(m, s) LP_DETAIL_FIELDS_8(m, s) s() m(lp_f8)
#define LP_DETAIL_FIELDS_10(m, s) LP_DETAIL_FIELDS_9(m, s) s() m(lp_f9)
#define LP_DETAIL_FIELDS_11(m, s) LP_DETAIL_FIELDS_10(m, s) s() m(lp_f10)
#define LP_DETAIL_FIELDS_12(m, s) LP_DETAIL_FIELDS_11(m, s) s() m(lp_f11)
#define LP_DETAIL_FIELDS_13(m, s) LP_DETAIL_FIELDS_12(m, s) s() m(lp_f12)
#define LP_DETAIL_FIELDS_14(m, s) LP_DETAIL_FIELDS_13(m, s) s() m(lp_f13)
#define LP_DETAIL_FIELDS_15(m, s) LP_DETAIL_FIELDS_14(m, s) s() m(lp_f14)
#define LP_DETAIL_FIELDS_16(m, s) LP_DETAIL_FIELDS_15(m, s) s() m(lp_f15)
#define LP_DETAIL_FIELDS_17(m, s) LP_DETAIL_FIELDS_16(m, s) s() m(lp_f16)
#define LP_DETAIL_FIELDS_18(m, s) LP_DETAIL_FIELDS_17(m, s) s() m(lp_f17)
#define LP_DETAIL_FIELDS_19(m, s) LP_DETAIL_FIELDS_18(m, s) s() m(lp_f18)
#define LP_DETAIL_FIELDS_20(m, s) LP_DETAIL_FIELDS_19(m, s) s() m(lp_f19)
#define LP_DETAIL_FIELDS_21(m, s) LP_DETAIL_FIELDS_20(m, s) s() m(lp_f20)
#define LP_DETAIL_FIELDS_22(m, s) LP_DETAIL_FIELDS_21(m, s) s() m(lp_f21)
#define LP_DETAIL_FIELDS_23(m, s) LP_DETAIL_FIELDS_22(m, s) s() m(lp_f22)
#define LP_DETAIL_FIELDS_24(m, s) LP_DETAIL_FIELDS_23(m, s) s() m(lp_f23)
#define LP_DETAIL_FIELDS_25(m, s) LP_DETAIL_FIELDS_24(m, s) s() m(lp_f24)
#define LP_DETAIL_FIELDS_26(m, s) LP_DETAIL_FIELDS_25(m, s) s() m(lp_f25)
#define LP_DETAIL_FIELDS_27(m, s) LP_DETAIL_FIELDS_26(m, s) s() m(lp_f26)
#define LP_DETAIL_FIELDS_28(m, s) LP_DETAIL_FIELDS_27(m, s) s() m(lp_f27)
#define LP_DETAIL_FIELDS_29(m, s) LP_DETAIL_FIELDS_28(m, s) s() m(lp_f28)
#define LP_DETAIL_FIELDS_30(m, s) LP_DETAIL_FIELDS_29(m, s) s() m(lp_f29)
#define LP_DETAIL_FIELDS_31(m, s) LP_DETAIL_FIELDS_30(m, s) s() m(lp_f30)
#define LP_DETAIL_FIELDS_32(m, s) LP_DETAIL_FIELDS_31(m, s) s() m(lp_f31)
#define LP_DETAIL_FIELDS_33(m, s) LP_DETAIL_FIELDS_32(m, s) s() m(lp_f32)
#define LP_DETAIL_FIELDS_34(m, s) LP_DETAIL_FIELDS_33(m, s) s() m(lp_f33)
#define LP_DETAIL_FIELDS_35(m, s) LP_DETAIL_FIELDS_34(m, s) s() m(lp_f34)
#define LP_DETAIL_FIELDS_36(m, s) LP_DETAIL_FIELDS_35(m, s) s() m(lp_f35)
#define LP_DETAIL_FIELDS_37(m, s) LP_DETAIL_FIELDS_36(m, s) s() m(lp_f36)
#define LP_DETAIL_FIELDS_38(m, s) LP_DETAIL_FIELDS_37(m, s) s() m(lp_f37)
#define LP_DETAIL_FIELDS_39(m, s) LP_DETAIL_FIELDS_38(m, s) s() m(lp_f38)
#define LP_DETAIL_FIELDS_40(m, s) LP_DETAIL_FIELDS_39(m, s) s() m(lp_f39)
#define LP_DETAIL_FIELDS_41(m, s) LP_DETAIL_FIELDS_40(m, s) s() m(lp_f40)
#define LP_DETAIL_FIELDS_42(m, s) LP_DETAIL_FIELDS_41(m, s) s() m(lp_f41)
#define LP_DETAIL_FIELDS_43(m, s) LP_DETAIL_FIELDS_42(m, s) s() m(lp_f42)
#define LP_DETAIL_FIELDS_44(m, s) LP_DETAIL_FIELDS_43(m, s) s() m(lp_f43)
#define LP_DETAIL_FIELDS_45(m, s) LP_DETAIL_FIELDS_44(m, s) s() m(lp_f44)
#define LP_DETAIL_FIELDS_46(m, s) LP_DETAIL_FIELDS_45(m, s) s() m(lp_f45)
#define LP_DETAIL_FIELDS_47(m, s) LP_DETAIL_FIELDS_46(m, s) s() m(lp_f46)
#define LP_DETAIL_FIELDS_48(m, s) LP_DETAIL_FIELDS_47(m, s) s() m(lp_f47)
#define LP_DETAIL_FIELDS_49(m, s) LP_DETAIL_FIELDS_48(m, s) s() m(lp_f48)
#define LP_DETAIL_FIELDS_50(m, s) LP_DETAIL_FIELDS_49(m, s) s() m(lp_f49)
#define LP_DETAIL_FIELDS_51(m, s) LP_DETAIL_FIELDS_50(m, s) s() m(lp_f50)
#define LP_DETAIL_FIELDS_52(m, s) LP_DETAIL_FIELDS_51(m, s) s() m(lp_f51)
#define LP_DETAIL_FIELDS_53(m, s) LP_DETAIL_FIELDS_52(m, s) s() m(lp_f52)
#define LP_DETAIL_FIELDS_54(m, s) LP_DETAIL_FIELDS_53(m, s) s() m(lp_f53)
#define LP_DETAIL_FIELDS_55(m, s) LP_DETAIL_FIELDS_54(m, s) s() m(lp_f54)
#define LP_DETAIL_FIELDS_56(m, s) LP_DETAIL_FIELDS_55(m, s) s() m(lp_f55)
#define LP_DETAIL_FIELDS_57(m, s) LP_DETAIL_FIELDS_56(m, s) s() m(lp_f56)
#define LP_DETAIL_FIELDS_58(m, s) LP_DETAIL_FIELDS_57(m, s) s() m(lp_f57)
#define LP_DETAIL_FIELDS_59(m, s) LP_DETAIL_FIELDS_58(m, s) s() m(lp_f58)
#define LP_DETAIL_FIELDS_60(m, s) LP_DETAIL_FIELDS_59(m, s) s() m(lp_f59)
#define LP_DETAIL_FIELDS_61(m, s) LP_DETAIL_FIELDS_60(m, s) s() m(lp_f60)
#define LP_DETAIL_FIELDS_62(m, s) LP_DETAIL_FIELDS_61(m, s) s() m(lp_f61)
#define LP_DETAIL_FIELDS_63(m, s) LP_DETAIL_FIELDS_62(m, s) s() m(lp_f62)
#define LP_DETAIL_FIELDS_64(m, s) LP_DETAIL_FIELDS_63(m, s) s() m(lp_f63)

LP_DETAIL_FIELDS_OF(1)
LP_DETAIL_FIELDS_OF(2)
LP_DETAIL_FIELDS_OF(3)
LP_DETAIL_FIELDS_OF(4)
LP_DETAIL_FIELDS_OF(5)
LP_DETAIL_FIELDS_OF(6)
LP_DETAIL_FIELDS_OF(7)
LP_DETAIL_FIELDS_OF(8)
LP_DETAIL_FIELDS_OF(9)
LP_DETAIL_FIELDS_OF(10)
LP_DETAIL_FIELDS_OF(11)
LP_DETAIL_FIELDS_OF(12)
LP_DETAIL_FIELDS_OF(13)
LP_DETAIL_FIELDS_OF(14)
LP_DETAIL_FIELDS_OF(15)
LP_DETAIL_FIELDS_OF(16)
LP_DETAIL_FIELDS_OF(17)
LP_DETAIL_FIELDS_OF(18)
LP_DETAIL_FIELDS_OF(19)
LP_DETAIL_FIELDS_OF(20)
LP_DETAIL_FIELDS_OF(21)
LP_DETAIL_FIELDS_OF(22)
LP_DETAIL_FIELDS_OF(23)
LP_DETAIL_FIELDS_OF(24)
LP_DETAIL_FIELDS_OF(25)
LP_DETAIL_FIELDS_OF(26)
LP_DETAIL_FIELDS_OF(27)
LP_DETAIL_FIELDS_OF(28)
LP_DETAIL_FIELDS_OF(29)
LP_DETAIL_FIELDS_OF(30)
LP_DETAIL_FIELDS_OF(31)
LP_DETAIL_FIELDS_OF(32)
LP_DETAIL_FIELDS_OF(33)
LP_DETAIL_FIELDS_OF(34)
LP_DETAIL_FIELDS_OF(35)
LP_DETAIL_FIELDS_OF(36)
LP_DETAIL_FIELDS_OF(37)
LP_DETAIL_FIELDS_OF(38)
LP_DETAIL_FIELDS_OF(39)
LP_DETAIL_FIELDS_OF(40)
LP_DETAIL_FIELDS_OF(41)
LP_DETAIL_FIELDS_OF(42)
LP_DETAIL_FIELDS_OF(43)
LP_DETAIL_FIELDS_OF(44)
LP_DETAIL_FIELDS_OF(45)
LP_DETAIL_FIELDS_OF(46)
LP_DETAIL_FIELDS_OF(47)
LP_DETAIL_FIELDS_OF(48)
LP_DETAIL_FIELDS_OF(49)
LP_DETAIL_FIELDS_OF(50)
LP_DETAIL_FIELDS_OF(51)
LP_DETAIL_FIELDS_OF(52)
LP_DETAIL_FIELDS_OF(53)
LP_DETAIL_FIELDS_OF(54)
LP_DETAIL_FIELDS_OF(55)
LP_DETAIL_FIELDS_OF(56)
LP_DETAIL_FIELDS_OF(57)
LP_DETAIL_FIELDS_OF(58)
LP_DETAIL_FIELDS_OF(59)
LP_DETAIL_FIELDS_OF(60)
LP_DETAIL_FIELDS_OF(61)
LP_DETAIL_FIELDS_OF(62)
LP_DETAIL_FIELDS_OF(63)
LP_DETAIL_FIELDS_OF(64)

// One more than the most: whether T{{}, ...} takes it says that T has
// more fields than the most, not that a C array took the extra values.
template <>
struct fields_of<most_aggregate_fields + 1> {
  template <class T>
  static constexpr bool fits = requires {
    T{LP_DETAIL_FIELD_LIST(64, LP_DETAIL_FIELD_BRACES, LP_DETAIL_FIELD_COMMA), {}};
  };
};

#undef LP_DETAIL_FIELDS_OF
#undef LP_DETAIL_FIELD_LIST
#undef LP_DETAIL_FIELD_COMMA
#undef LP_DETAIL_FIELD_BRACES
#undef LP_DETAIL_FIELD_NAME
#undef LP_DETAIL_FIELDS_64
#undef LP_DETAIL_FIELDS_63
#undef LP_DETAIL_FIELDS_62
#undef LP_DETAIL_FIELDS_61
#undef LP_DETAIL_FIELDS_60
#undef LP_DETAIL_FIELDS_59
#undef LP_DETAIL_FIELDS_58
#undef LP_DETAIL_FIELDS_57
#undef LP_DETAIL_FIELDS_56
#undef LP_DETAIL_FIELDS_55
#undef LP_DETAIL_FIELDS_54
#undef LP_DETAIL_FIELDS_53
#undef LP_DETAIL_FIELDS_52
#undef LP_DETAIL_FIELDS_51
#undef LP_DETAIL_FIELDS_50
#undef LP_DETAIL_FIELDS_49
#undef LP_DETAIL_FIELDS_48
#undef LP_DETAIL_FIELDS_47
#undef LP_DETAIL_FIELDS_46
#undef LP_DETAIL_FIELDS_45
#undef LP_DETAIL_FIELDS_44
#undef LP_DETAIL_FIELDS_43
#undef LP_DETAIL_FIELDS_42
#undef LP_DETAIL_FIELDS_41
#undef LP_DETAIL_FIELDS_40
#undef LP_DETAIL_FIELDS_39
#undef LP_DETAIL_FIELDS_38
#undef LP_DETAIL_FIELDS_37
#undef LP_DETAIL_FIELDS_36
#undef LP_DETAIL_FIELDS_35
#undef LP_DETAIL_FIELDS_34
#undef LP_DETAIL_FIELDS_33
#undef LP_DETAIL_FIELDS_32
#undef LP_DETAIL_FIELDS_31
#undef LP_DETAIL_FIELDS_30
#undef LP_DETAIL_FIELDS_29
#undef LP_DETAIL_FIELDS_28
#undef LP_DETAIL_FIELDS_27
#undef LP_DETAIL_FIELDS_26
#undef LP_DETAIL_FIELDS_25
#undef LP_DETAIL_FIELDS_24
#undef LP_DETAIL_FIELDS_23
#undef LP_DETAIL_FIELDS_22
#undef LP_DETAIL_FIELDS_21
#undef LP_DETAIL_FIELDS_20
#undef LP_DETAIL_FIELDS_19
#undef LP_DETAIL_FIELDS_18
#undef LP_DETAIL_FIELDS_17
#undef LP_DETAIL_FIELDS_16
#undef LP_DETAIL_FIELDS_15
#undef LP_DETAIL_FIELDS_14
#undef LP_DETAIL_FIELDS_13
#undef LP_DETAIL_FIELDS_12
#undef LP_DETAIL_FIELDS_11
#undef LP_DETAIL_FIELDS_10
#undef LP_DETAIL_FIELDS_9
#undef LP_DETAIL_FIELDS_8
#undef LP_DETAIL_FIELDS_7
#undef LP_DETAIL_FIELDS_6
#undef LP_DETAIL_FIELDS_5
#undef LP_DETAIL_FIELDS_4
#undef LP_DETAIL_FIELDS_3
#undef LP_DETAIL_FIELDS_2
#undef LP_DETAIL_FIELDS_1

// Whether T{a, b, ...} compiles with as many values as I has, each an
// any_field, and then the values of Last (none or one).
template <class T, std::size_t... I, class... Last>
constexpr bool takes_fields(std::index_sequence<I...>, Last... last) {
  return requires {
    T{((void)I, any_field{})..., last...};
  };
}

// The most values T{a, b, ...} takes, from Low to High (T{} compiles), by
// halves: a handful of trials whatever the count. As many as T has fields,
// but for a C array, each of whose elements takes one.
template <class T, std::size_t Low, std::size_t High>
consteval std::size_t fields_taken() {
  if constexpr (Low == High) {
    return Low;
  } else {
    constexpr std::size_t middle = (Low + High + 1) / 2;
    if constexpr (takes_fields<T>(std::make_index_sequence<middle>{}))
      return fields_taken<T, middle, High>();
    else
      return fields_taken<T, Low, middle - 1>();
  }
}

// Where T's I-th of N fields is in the object never built, as a template
// argument may hold it. No constant for a reference field, whose referent
// the object does not have, nor for a bit-field, which has no address: the
// const reference to it is to a copy, gone when the call returns.
template <class T, std::size_t N, std::size_t I>
consteval auto field_address() {
  return point_at(
      std::get<I>(fields_of<N>::apply(unbuilt_object<T>.value, [](const auto&... field) {
        return std::tuple{&field...};
      })));
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

template <auto Address>
struct constant_address {};

// Whether each of T's N fields has an address at compile time: none is a
// reference.
template <class T, std::size_t... I>
constexpr bool fields_addressed(std::index_sequence<I...>) {
  return (requires { typename constant_address<field_address<T, sizeof...(I), I>()>; } &&
          ...);
}

// The names of T's N fields, cut from the compiler's spellings at compile
// time.
template <class T, std::size_t N>
struct field_names {
  static constexpr auto spelled = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<std::string_view, N>{
        field_name_in(spelled_field<field_address<T, N, I>()>(), field_spelling_end)...};
  }
  (std::make_index_sequence<N>{});

  // Each name has one and none repeats: what a spelling misread would break.
  static constexpr bool valid = [] {
    for (std::size_t i = 0; i < N; ++i) {
      if (spelled[i].empty()) return false;
      for (std::size_t j = 0; j < i; ++j)
        if (spelled[i] == spelled[j]) return false;
    }
    return true;
  }();
};

// The I-th name as a string of its own: the spellings themselves (a few
// hundred characters a field) stay out of the program.
template <class T, std::size_t N, std::size_t I>
struct field_name_text {
  static constexpr std::string_view name = field_names<T, N>::spelled[I];
  static constexpr std::array<char, name.size() + 1> value = [] {
    std::array<char, name.size() + 1> out{};
    for (std::size_t i = 0; i < name.size(); ++i) out[i] = name[i];
    return out;
  }();
};

template <class T, std::size_t N, std::size_t... I>
constexpr std::array<const char*, N> field_name_texts(std::index_sequence<I...>) {
  return {field_name_text<T, N, I>::value.data()...};
}

// Why the compiler cannot name a class aggregate's fields, if it cannot.
enum class aggregate_refusal {
  none,
  base,         // T has a base class
  uncounted,    // a C array, or a field without a default value
  too_many,     // more than most_aggregate_fields fields
  unaddressed,  // a bit-field or a reference: no address at compile time
  unnamed,      // a compiler whose spelling of a field field_name.hpp does not know
};

// T's field count, or more than the most (T{} compiling).
template <class T>
inline constexpr std::size_t aggregate_field_count =
    fields_taken<T, 0, most_aggregate_fields + 1>();

// Each step is taken only when those before it passed: a structured
// binding of the wrong count, a bit-field's address, would stop the build
// with the compiler's message instead of the library's.
template <class T>
consteval aggregate_refusal find_aggregate_refusal() {
  if constexpr (field_spelling_end.empty()) {
    return aggregate_refusal::unnamed;
  } else if constexpr (requires { T{any_base_of<T>{}}; }) {
    return aggregate_refusal::base;  // (its first initializer would count the base)
  } else if constexpr (!fields_of<0>::template fits<T>) {
    return aggregate_refusal::uncounted;
  } else {
    constexpr std::size_t count = aggregate_field_count<T>;
    if constexpr (count > most_aggregate_fields) {
      return fields_of<most_aggregate_fields + 1>::template fits<T>
                 ? aggregate_refusal::too_many
                 : aggregate_refusal::uncounted;
    } else if constexpr (!fields_of<count>::template fits<T> ||
                         fields_of<count + 1>::template fits<T> ||
                         takes_fields<T>(std::make_index_sequence<count>{},
                                         any_lvalue{})) {
      // More values than fields (a C array), or fewer (a field that takes
      // no value but has a default: a reference).
      return aggregate_refusal::uncounted;
    } else if constexpr (!fields_addressed<T>(std::make_index_sequence<count>{})) {
      return aggregate_refusal::unaddressed;
    } else if constexpr (!field_names<T, count>::valid) {
      return aggregate_refusal::unnamed;
    } else {
      return aggregate_refusal::none;
    }
  }
}

// Why the compiler cannot name a class aggregate's fields, or none.
template <class T>
inline constexpr aggregate_refusal aggregate_refusal_of = find_aggregate_refusal<T>();

// The fields of a class aggregate whose refusal is none: their count,
// types (cv-qualifiers aside), names, and a walk over them.
template <class T>
struct aggregate_fields {
  static constexpr std::size_t count = aggregate_field_count<T>;
  using fields = fields_of<count>;
  using types = decltype(fields::apply(std::declval<T&>(), field_types{}));
  static constexpr std::array<const char*, count> names =
      field_name_texts<T, count>(std::make_index_sequence<count>{});

  // Calls f(name, field) for each field of `value` (const or not), in
  // declaration order.
  template <class S, class F>
  static void for_each(S& value, F&& f) {
    fields::apply(value, [&](auto&... field) {
      std::size_t i = 0;
      (f(names[i++], field), ...);
    });
  }
};

}  // namespace lp::detail
