#pragma once

// cbor::write: a C++ value appended to a body as CBOR, the value that
// to_wire (encode.hpp) gives written without building it first. A vector of
// numbers or a tensor is then one memcpy into the body, where building the
// json value and writing that copies it twice. A type this file does not
// know is written through its json value.

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/decode.hpp>
#include <launchpad/detail/encode.hpp>
#include <launchpad/detail/typed_array.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/wire.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace lp::detail::cbor {

// The integer types that travel as CBOR integers; character types go as
// nlohmann has them.
template <class T>
concept plain_integer = std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                        !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
                        !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> &&
                        !std::is_same_v<T, char32_t>;

// An item's initial byte and its argument, in the shortest form.
inline void head(std::string& out, std::uint8_t major, std::uint64_t argument) {
  auto initial = static_cast<std::uint8_t>(major << 5);
  if (argument < 24) {
    out += static_cast<char>(initial | argument);
    return;
  }
  int width = argument <= 0xff ? 1 : argument <= 0xffff ? 2 : argument <= 0xffffffff ? 4 : 8;
  out += static_cast<char>(initial | (width == 1 ? 24 : width == 2 ? 25 : width == 4 ? 26 : 27));
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8)
    out += static_cast<char>((argument >> shift) & 0xff);
}

inline void text(std::string& out, std::string_view value) {
  head(out, 3, value.size());
  out += value;
}

template <packable T>
void numbers(std::string& out, const T* data, std::size_t count) {
  head(out, 6, typed_array::native_tag<T>);
  head(out, 2, count * sizeof(T));
  out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

template <class T>
void write(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += static_cast<char>(value ? 0xf5 : 0xf4);
  } else if constexpr (plain_integer<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) return head(out, 1, static_cast<std::uint64_t>(-(value + 1)));
    }
    head(out, 0, static_cast<std::uint64_t>(value));
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto wide = static_cast<double>(value);
    std::uint64_t bits;
    std::memcpy(&bits, &wide, sizeof bits);
    out += static_cast<char>(0xfb);
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((bits >> shift) & 0xff);
  } else if constexpr (std::is_same_v<T, std::string>) {
    text(out, value);
  } else if constexpr (is_tensor<T>) {
    head(out, 5, 2);  // the keys in the order a json object has them
    text(out, "data");
    numbers(out, value.data(), value.values().size());
    text(out, "shape");
    write(out, value.shape());
  } else if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    if constexpr (packable<element> && std::is_same_v<T, std::vector<element>>) {
      numbers(out, value.data(), value.size());
    } else {
      head(out, 4, value.size());
      for (const auto& item : value) write<element>(out, item);
    }
  } else if constexpr (is_optional<T>) {
    if (value) write(out, *value);
    else out += static_cast<char>(0xf6);
  } else if constexpr (is_string_map<T>) {
    head(out, 5, value.size());
    for (const auto& [key, item] : value) {
      text(out, key);
      write(out, item);
    }
  } else if constexpr (is_tuple_like<T>) {
    head(out, 4, std::tuple_size_v<T>);
    std::apply([&](const auto&... item) { (write(out, item), ...); }, value);
  } else if constexpr (hana_struct<T>) {
    auto members = boost::hana::accessors<T>();
    head(out, 5, boost::hana::length(members));
    boost::hana::for_each(members, [&](auto member) {
      text(out, boost::hana::to<const char*>(boost::hana::first(member)));
      write(out, boost::hana::second(member)(value));
    });
  } else {
    json::to_cbor(to_wire(value), out);
  }
}

}  // namespace lp::detail::cbor
