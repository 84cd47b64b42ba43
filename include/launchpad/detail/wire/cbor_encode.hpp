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
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/json_encode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/wire.hpp>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace lp::detail::cbor {

// The integer types that travel as CBOR integers; character types go as
// nlohmann has them.
template <class T>
concept plain_integer =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
    !std::is_same_v<T, wchar_t> && !std::is_same_v<T, char8_t> &&
    !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;

// An item's initial byte and its argument, in the shortest form.
inline void head(std::string& out, std::uint8_t major, std::uint64_t argument) {
  auto initial = static_cast<std::uint8_t>(major << 5);
  if (argument < 24) {
    out += static_cast<char>(initial | argument);
    return;
  }
  int width = argument <= 0xff         ? 1
              : argument <= 0xffff     ? 2
              : argument <= 0xffffffff ? 4
                                       : 8;
  out += static_cast<char>(initial | (width == 1   ? 24
                                      : width == 2 ? 25
                                      : width == 4 ? 26
                                                   : 27));
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8)
    out += static_cast<char>((argument >> shift) & 0xff);
}

inline void text(std::string& out, std::string_view value) {
  head(out, 3, value.size());
  out += value;
}

// A body that refers to the numbers of its large typed arrays instead of
// copying them, for a call whose arguments outlive the sending of its
// request (a blocking call): it is sent in pieces, the large arrays from
// where they are.
class gathered {
 public:
  // Smaller arrays are copied, as are all after the first max_borrowed.
  static constexpr std::size_t borrow_from = std::size_t{64} << 10;
  static constexpr std::size_t max_borrowed = 64;

  // This thread's, emptied, one per `Use` (as thread_buffer).
  template <class Use>
  static gathered& of_this_thread() {
    thread_local gathered body;
    body.clear();
    return body;
  }

  // Empties the body; a thread's keeps its capacity up to max_kept_buffer.
  void clear() {
    drop_if_large(bytes_);
    bytes_.clear();
    borrowed_.clear();
  }

  std::string& bytes() { return bytes_; }
  bool borrows() const { return !borrowed_.empty(); }

  void numbers(const char* data, std::size_t size) {
    if (size < borrow_from || borrowed_.size() == max_borrowed) {
      bytes_.append(data, size);
      return;
    }
    borrowed_.push_back({bytes_.size(), std::string_view(data, size)});
  }

  // The body, as consecutive pieces; valid until the next change.
  std::span<const std::string_view> pieces() {
    pieces_.clear();
    std::size_t at = 0;
    for (const auto& b : borrowed_) {
      pieces_.push_back(std::string_view(bytes_).substr(at, b.at - at));
      pieces_.push_back(b.data);
      at = b.at;
    }
    pieces_.push_back(std::string_view(bytes_).substr(at));
    return pieces_;
  }

 private:
  struct borrowed {
    std::size_t at;  // where in bytes_ they go
    std::string_view data;
  };
  std::string bytes_;
  std::vector<borrowed> borrowed_;
  std::vector<std::string_view> pieces_;
};

// Where cbor::write puts what it writes: a string, or a gathered body.
inline std::string& bytes_of(std::string& out) {
  return out;
}
inline std::string& bytes_of(gathered& out) {
  return out.bytes();
}
inline void numbers_into(std::string& out, const char* data, std::size_t size) {
  out.append(data, size);
}
inline void numbers_into(gathered& out, const char* data, std::size_t size) {
  out.numbers(data, size);
}

template <class Out, packable T>
void numbers(Out& out, const T* data, std::size_t count) {
  head(bytes_of(out), 6, typed_array::native_tag<T>);
  head(bytes_of(out), 2, count * sizeof(T));
  numbers_into(out, reinterpret_cast<const char*>(data), count * sizeof(T));
}

template <class Out, class T>
void write(Out& out, const T& value) {
  auto& bytes = bytes_of(out);
  if constexpr (std::is_same_v<T, bool>) {
    bytes += static_cast<char>(value ? 0xf5 : 0xf4);
  } else if constexpr (plain_integer<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) return head(bytes, 1, static_cast<std::uint64_t>(-(value + 1)));
    }
    head(bytes, 0, static_cast<std::uint64_t>(value));
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto wide = static_cast<double>(value);
    std::uint64_t bits;
    std::memcpy(&bits, &wide, sizeof bits);
    bytes += static_cast<char>(0xfb);
    for (int shift = 56; shift >= 0; shift -= 8)
      bytes += static_cast<char>((bits >> shift) & 0xff);
  } else if constexpr (std::is_same_v<T, std::string>) {
    text(bytes, value);
  } else if constexpr (is_tensor<T>) {
    head(bytes, 5, 2);  // the keys in the order a json object has them
    text(bytes, "data");
    numbers(out, value.data(), value.values().size());
    text(bytes, "shape");
    write(out, value.shape());
  } else if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    if constexpr (packable<element> && std::is_same_v<T, std::vector<element>>) {
      numbers(out, value.data(), value.size());
    } else {
      head(bytes, 4, value.size());
      for (const auto& item : value) write<Out, element>(out, item);
    }
  } else if constexpr (is_optional<T>) {
    if (value)
      write(out, *value);
    else
      bytes += static_cast<char>(0xf6);
  } else if constexpr (is_string_map<T>) {
    head(bytes, 5, value.size());
    for (const auto& [key, item] : value) {
      text(bytes, key);
      write(out, item);
    }
  } else if constexpr (is_tuple_like<T>) {
    head(bytes, 4, std::tuple_size_v<T>);
    std::apply([&](const auto&... item) { (write(out, item), ...); }, value);
  } else if constexpr (hana_struct<T>) {
    auto members = boost::hana::accessors<T>();
    head(bytes, 5, boost::hana::length(members));
    boost::hana::for_each(members, [&](auto member) {
      text(bytes, boost::hana::to<const char*>(boost::hana::first(member)));
      write(out, boost::hana::second(member)(value));
    });
  } else {
    json::to_cbor(to_wire(value), bytes);
  }
}

}  // namespace lp::detail::cbor
