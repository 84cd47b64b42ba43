#pragma once

// cbor::read_as<T>: the item at a position of a CBOR body as a T. An item in
// the form cbor::write gives a T is read straight into the T, so a typed
// array costs one memcpy. Any other item, and any value that does not fit,
// goes through its json value and from_wire (decode.hpp): the result and
// every error are from_wire's, only faster when the peer wrote what we write.

#include <array>
#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/detail/wire/utf8.hpp>
#include <launchpad/error.hpp>
#include <launchpad/tensor.hpp>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail::cbor {

// Reads the items a fast read understands; each step either consumes what
// it read or reports that the item is not of that form.
class cursor {
 public:
  cursor(std::string_view in, std::size_t at, std::size_t max_depth)
      : in_(in), at_(at), max_depth_(max_depth) {}

  // One more item being read inside those already open. Past max_depth a
  // fast read gives up, and the json reader refuses the item: a recursive
  // type must not let a peer's nesting run the stack out.
  class level {
   public:
    explicit level(cursor& in) : in_(in) { ++in_.depth_; }
    ~level() { --in_.depth_; }
    level(const level&) = delete;
    level& operator=(const level&) = delete;
    explicit operator bool() const { return in_.depth_ <= in_.max_depth_; }

   private:
    cursor& in_;
  };

  std::size_t at() const { return at_; }

  bool byte(std::uint8_t value) {
    if (at_ >= in_.size() || static_cast<std::uint8_t>(in_[at_]) != value) return false;
    ++at_;
    return true;
  }

  // The argument of an item of this major type with a definite argument.
  std::optional<std::uint64_t> head(std::uint8_t major) {
    if (at_ >= in_.size()) return std::nullopt;
    auto initial = static_cast<std::uint8_t>(in_[at_]);
    std::uint8_t info = initial & 0x1f;
    if (initial >> 5 != major || info > 27) return std::nullopt;
    std::size_t width = info < 24 ? 0 : std::size_t{1} << (info - 24);
    if (width > in_.size() - at_ - 1) return std::nullopt;
    auto value = width ? big_endian(at_ + 1, width) : info;
    at_ += 1 + width;
    return value;
  }

  std::optional<std::string_view> take(std::uint64_t count) {
    if (count > in_.size() - at_) return std::nullopt;
    auto out = in_.substr(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return out;
  }

  std::optional<std::string_view> text() {
    auto size = head(3);
    if (!size) return std::nullopt;
    auto out = take(*size);
    if (!out || !valid_utf8(*out)) return std::nullopt;
    return out;
  }

  std::optional<double> floating() {
    for (std::size_t width : {8, 4}) {
      if (!byte(width == 8 ? 0xfb : 0xfa)) continue;
      if (width > in_.size() - at_) return std::nullopt;
      auto bits = big_endian(at_, width);
      at_ += width;
      if (width == 4) {
        float narrow;
        auto bits32 = static_cast<std::uint32_t>(bits);
        std::memcpy(&narrow, &bits32, sizeof narrow);
        return narrow;
      }
      double wide;
      std::memcpy(&wide, &bits, sizeof wide);
      return wide;
    }
    return std::nullopt;
  }

  std::size_t left() const { return in_.size() - at_; }

 private:
  std::uint64_t big_endian(std::size_t from, std::size_t width) const {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i)
      value = (value << 8) | static_cast<std::uint8_t>(in_[from + i]);
    return value;
  }

  std::string_view in_;
  std::size_t at_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
};

template <class T>
std::optional<T> fast(cursor& in);

template <packable E>
std::optional<std::vector<E>> fast_numbers(cursor& in) {
  auto tag = in.head(6);
  auto size = tag ? in.head(2) : std::nullopt;
  auto bytes = size ? in.take(*size) : std::nullopt;
  std::vector<E> out;
  if (!bytes || !typed_array::unpack(*tag, bytes->data(), bytes->size(), out))
    return std::nullopt;
  return out;
}

template <class T>
std::optional<T> fast_tensor(cursor& in) {
  using element = typename T::value_type;
  if (in.head(5) != 2u) return std::nullopt;
  std::optional<std::vector<element>> data;
  std::optional<typename T::shape_type> shape;
  for (int i = 0; i < 2; ++i) {
    auto key = in.text();
    if (key == "data" && !data)
      data = fast_numbers<element>(in);
    else if (key == "shape" && !shape)
      shape = fast<typename T::shape_type>(in);
    else
      return std::nullopt;
  }
  if (!data || !shape) return std::nullopt;
  try {
    return T(std::move(*shape), std::move(*data));
  } catch (const usage_error&) {
    return std::nullopt;  // a shape that does not hold the values: from_wire says so
  }
}

template <class T>
std::optional<T> fast_struct(cursor& in) {
  auto members = boost::hana::accessors<T>();
  constexpr std::size_t count = decltype(boost::hana::length(members))::value;
  if (in.head(5) != count) return std::nullopt;
  T out{};
  std::array<bool, count> seen{};
  for (std::size_t entry = 0; entry < count; ++entry) {
    auto key = in.text();
    if (!key) return std::nullopt;
    bool read = false;
    std::size_t index = 0;
    boost::hana::for_each(members, [&](auto member) {
      auto i = index++;
      if (seen[i] || *key != boost::hana::to<const char*>(boost::hana::first(member)))
        return;
      auto& field = boost::hana::second(member)(out);
      auto value = fast<std::remove_cvref_t<decltype(field)>>(in);
      if (!value) return;
      field = std::move(*value);
      seen[i] = read = true;
    });
    if (!read) return std::nullopt;
  }
  return out;
}

template <class T>
std::optional<T> fast(cursor& in) {
  cursor::level nested(in);
  if (!nested) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) {
    if (in.byte(0xf5)) return true;
    if (in.byte(0xf4)) return false;
    return std::nullopt;
  } else if constexpr (plain_integer<T>) {
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    if (auto n = in.head(0))
      return *n <= max ? std::optional<T>(static_cast<T>(*n)) : std::nullopt;
    if constexpr (std::is_signed_v<T>) {
      if (auto n = in.head(1))
        return *n <= max
                   ? std::optional<T>(static_cast<T>(-1 - static_cast<std::int64_t>(*n)))
                   : std::nullopt;
    }
    return std::nullopt;
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto value = in.floating();
    if (!value || (std::isfinite(*value) &&
                   std::abs(*value) > static_cast<double>(std::numeric_limits<T>::max())))
      return std::nullopt;
    return static_cast<T>(*value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    auto value = in.text();
    return value ? std::optional<T>(std::string(*value)) : std::nullopt;
  } else if constexpr (is_tensor<T>) {
    return fast_tensor<T>(in);
  } else if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    if constexpr (packable<element> && std::is_same_v<T, std::vector<element>>) {
      return fast_numbers<element>(in);
    } else {
      auto size = in.head(4);
      if (!size || *size > in.left()) return std::nullopt;
      T out;
      out.reserve(static_cast<std::size_t>(*size));
      for (std::uint64_t i = 0; i < *size; ++i) {
        auto item = fast<element>(in);
        if (!item) return std::nullopt;
        out.push_back(std::move(*item));
      }
      return out;
    }
  } else if constexpr (is_optional<T>) {
    if (in.byte(0xf6)) return T{};
    auto value = fast<typename T::value_type>(in);
    return value ? std::optional<T>(T(std::move(*value))) : std::nullopt;
  } else if constexpr (is_string_map<T>) {
    auto size = in.head(5);
    if (!size) return std::nullopt;
    T out;
    for (std::uint64_t i = 0; i < *size; ++i) {
      auto key = in.text();
      auto value = key ? fast<typename T::mapped_type>(in) : std::nullopt;
      if (!value) return std::nullopt;
      out.insert_or_assign(std::string(*key), std::move(*value));
    }
    return out;
  } else if constexpr (is_tuple_like<T>) {
    constexpr auto size = std::tuple_size_v<T>;
    if (in.head(4) != size) return std::nullopt;
    return [&]<std::size_t... I>(std::index_sequence<I...>)->std::optional<T> {
      std::tuple<std::optional<std::tuple_element_t<I, T>>...> items;
      bool all =
          ((std::get<I>(items) = fast<std::tuple_element_t<I, T>>(in)).has_value() &&
           ...);
      if (!all) return std::nullopt;
      return T{std::move(*std::get<I>(items))...};
    }
    (std::make_index_sequence<size>{});
  } else if constexpr (hana_struct<T>) {
    return fast_struct<T>(in);
  } else {
    return std::nullopt;
  }
}

// The item at `at` as a T; `at` moves past it. Throws decode_error for a
// value that does not fit T, and what cbor::reader throws for bytes that
// are not a CBOR item.
template <class T>
T read_as(std::string_view bytes, std::size_t& at, std::size_t max_depth) {
  cursor in(bytes, at, max_depth);
  if (auto value = fast<T>(in)) {
    at = in.at();
    return std::move(*value);
  }
  json item = reader(bytes, max_depth).read_at(at);
  return from_wire<T>(item);
}

}  // namespace lp::detail::cbor
