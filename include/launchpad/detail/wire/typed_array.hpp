#pragma once

// Contiguous numbers travel in CBOR as RFC 8746 typed arrays: a tag that
// names the element type and byte order, then one byte string. Packing and
// unpacking is a memcpy (a byte swap for the other byte order), where an
// array of CBOR numbers costs a parse per element. In JSON they are arrays
// of numbers, so curl and other languages read them as before.

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/util/spare_vectors.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace lp::detail {

namespace typed_array {

// RFC 8746 section 2.1: tag = 0b010_f_s_e_ll (float, signed, little-endian,
// log2 of the element size for integers, 1 or 2 for float32 or float64);
// protocol.toml names the bits.
template <packable T>
constexpr std::uint8_t tag(bool little_endian) {
  namespace tags = protocol::array_tag;
  if constexpr (sizeof(T) == 1)
    return std::is_signed_v<T> ? tags::int8 : tags::uint8;  // no byte order
  int ll = sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  int order = little_endian ? tags::little_endian_bit : 0;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<std::uint8_t>(tags::first | tags::float_bit | order |
                                     (sizeof(T) == 4 ? 1 : 2));
  else
    return static_cast<std::uint8_t>(
        tags::first | (std::is_signed_v<T> ? tags::signed_bit : 0) | order | ll);
}

template <packable T>
constexpr std::uint8_t native_tag = tag<T>(std::endian::native == std::endian::little);

// The element size and kind a typed-array tag stands for, for JSON output.
struct element {
  std::size_t size;
  bool is_float;
  bool is_signed;
  bool little_endian;
};

inline std::optional<element> element_of(std::uint64_t tag) {
  namespace tags = protocol::array_tag;
  if (tag < tags::first || tag > tags::last) return std::nullopt;
  bool little = tag & tags::little_endian_bit;
  auto ll = tag & tags::size_bits;
  if (tag & tags::float_bit) {
    if (ll == 0 || ll == 3)
      return std::nullopt;  // float16 and float128: no C++ type here
    return element{ll == 1 ? 4u : 8u, true, true, little};
  }
  bool is_signed = tag & tags::signed_bit;
  if (tag == tags::reserved) return std::nullopt;
  return element{std::size_t{1} << ll, false, is_signed, little};
}

template <class T>
T byte_swapped(T value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  std::reverse(bytes, bytes + sizeof(T));
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// Unpacks the bytes of a typed array tagged `tag` into `out` (either byte
// order); false when the tag is not T's or the length is not a whole number
// of elements.
template <packable T>
bool unpack(std::uint64_t tag, const void* data, std::size_t size, std::vector<T>& out) {
  bool native = tag == native_tag<T>;
  bool swapped = tag == typed_array::tag<T>(std::endian::native != std::endian::little);
  if ((!native && !swapped) || size % sizeof(T) != 0) return false;
  auto count = size / sizeof(T);
  // Into the storage of a vector a reply is done with, if one is kept:
  // memory already faulted in (spare_vectors.hpp).
  if (out.capacity() < count && spare::vectors<T>::worth(count))
    spare::vectors<T>::take(count, out);
  // From aligned bytes the vector is built by one copy; resize would first
  // zero all of it (a second pass over megabytes of a bulk argument).
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) == 0) {
    auto first = static_cast<const T*>(data);
    out.assign(first, first + count);
  } else {
    out.resize(count);
    if (size != 0) std::memcpy(out.data(), data, size);
  }
  if (!native)
    for (auto& value : out) value = byte_swapped(value);
  return true;
}

// The same into exactly N values; false also when there are not N.
template <packable T, std::size_t N>
bool unpack(std::uint64_t tag, const void* data, std::size_t size,
            std::array<T, N>& out) {
  bool native = tag == native_tag<T>;
  bool swapped = tag == typed_array::tag<T>(std::endian::native != std::endian::little);
  if ((!native && !swapped) || size != N * sizeof(T)) return false;
  if (size != 0) std::memcpy(out.data(), data, size);
  if (!native)
    for (auto& value : out) value = byte_swapped(value);
  return true;
}

// The value with every typed array turned into an array of numbers, for a
// JSON reader. Values of a tag that is not a typed array stay as they are.
LP_API void expand(json& value);

// Whether `value` holds a byte string anywhere (only then is expand needed).
LP_API bool has_binary(const json& value);

}  // namespace typed_array
}  // namespace lp::detail
