#pragma once

// cbor::read_as<T>: the item at a position of a CBOR body, read straight
// into a T: the one reader of every wire type (a JSON value is read through
// its CBOR form, json_decode.hpp). A typed array costs one memcpy. It reads
// every form a peer may write (docs/protocol.md): float16/32/64 or an
// integer for a float, indefinite lengths, either byte order of a typed
// array, map keys in any order (the last of a repeated key wins), unknown
// struct members (passed over).
//
// A value that does not fit T gets a decode_error whose message quotes the
// item ("expected an integer in range (short), got number 70000"). Where a
// value holds several misfits, the one named is the first in the order of
// the type (a struct's members in declaration order, a map's keys in
// sorted order), whatever the order on the wire, so a JSON body and its
// CBOR form get the same message. Bytes that are not CBOR get what the
// generic reader (cbor_reader.hpp) throws for them, even where a misfit
// comes first.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/util/type_name.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/decode_error.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail::cbor {

// ---- What the typed reader shares across types (not templates) ----------

// The item at `start` does not fit: "expected <expected> (<type>), got
// <the item>", quoted as the generic reader reads it. `type` is the C++
// type's type_spelling.
[[noreturn]] LP_API void mismatch(reader& in, std::size_t start,
                                  std::string_view expected, std::string_view type);

// The item at `start` is not a tensor.
[[noreturn]] LP_API void not_a_tensor(reader& in, std::size_t start);

// The number of items of the indefinite-length array at the reader, which
// stays where it is.
LP_API std::size_t count_items(reader& in);

// An integer item (initial byte read) within [min, max], as its 64 bits.
inline std::uint64_t read_integer(reader& in, std::size_t start, std::uint8_t initial,
                                  std::int64_t min, std::uint64_t max,
                                  std::string_view type) {
  std::uint8_t major = initial >> 5, info = initial & 0x1f;
  if (major > 1) mismatch(in, start, "an integer", type);
  if (info == 31) in.indefinite_number(major);
  auto arg = in.argument(info);
  if (major == 0) {
    if (arg > max) mismatch(in, start, "an integer in range", type);
    return arg;
  }
  auto value = in.negative(arg);
  if (value < min) mismatch(in, start, "an integer in range", type);
  return static_cast<std::uint64_t>(value);
}

// A number item (an integer or a float) within +-max, or not finite.
inline double read_number(reader& in, std::size_t start, std::uint8_t initial, double max,
                          std::string_view type) {
  std::uint8_t major = initial >> 5, info = initial & 0x1f;
  double value;
  if (major == 7 && info >= 25 && info <= 27) {
    value = in.floating(info);
  } else if (major <= 1) {
    if (info == 31) in.indefinite_number(major);
    auto arg = in.argument(info);
    value = major == 0 ? static_cast<double>(arg) : static_cast<double>(in.negative(arg));
  } else {
    mismatch(in, start, "a number", type);
  }
  if (std::isfinite(value) && std::abs(value) > max)
    mismatch(in, start, "a number in range", type);
  return value;
}

// The bytes of a typed array (initial byte read, major type 6); nothing if
// the item is not a tagged byte string.
struct tagged_bytes {
  std::uint64_t tag;
  std::string_view bytes;
};
inline tagged_bytes read_tagged(reader& in, std::uint8_t initial, std::string& scratch,
                                const segment_view** shared = nullptr) {
  if ((initial & 0x1f) == 31) in.indefinite_number(6);
  auto tag = in.argument(initial & 0x1f);
  return {tag, in.tagged_bytes(tag, scratch, shared)};
}

// The misfits of a map's or struct's entries, kept until every entry is
// read: the one thrown is the first in the type's order, as a JSON object
// (sorted keys, the last of a repeated one kept) read in that order gives.
// Entries are keyed by their map key, or by a struct member's index.
class deferred_misfits {
 public:
  LP_API void note(std::string_view key, const decode_error& e);
  void note(std::size_t index, const decode_error& e) { note(order(index), e); }
  void clear(std::string_view key) {
    if (misfits_) erase(key);
  }
  void clear(std::size_t index) {
    if (misfits_) erase(order(index));
  }
  LP_API const std::string* find(std::size_t index) const;
  // Throws the first misfit, if any.
  void throw_first() const {
    if (misfits_) throw_any();
  }

 private:
  // Indices sort as numbers: fixed width.
  LP_API static std::string order(std::size_t index);
  LP_API void erase(std::string_view key);
  LP_API void throw_any() const;

  std::unique_ptr<std::map<std::string, std::string, std::less<>>> misfits_;
};

// Reads an entry's value with `read`; a misfit is noted under `key`, the
// value passed over, and the reading goes on.
template <class Key, class Read>
bool read_entry(reader& in, deferred_misfits& misfits, const Key& key, Read&& read) {
  auto start = in.at();
  try {
    read();
    misfits.clear(key);
    return true;
  } catch (const decode_error& e) {
    in.seek(start);
    in.skip();
    misfits.note(key, e);
    return false;
  }
}

// ---- The typed reader ----------------------------------------------------

template <class T>
void read_value(reader& in, T& out);

template <class T>
void read_after(reader& in, T& out, std::size_t start, std::uint8_t initial);

// A std::vector, std::array or std::set given as an array of items.
template <class T>
void read_items(reader& in, T& out, std::size_t start, std::uint8_t initial,
                std::string_view expected) {
  using element = typename T::value_type;
  if (initial >> 5 != 4) mismatch(in, start, expected, type_spelling<T>);
  auto count = in.size_of(initial);
  in.array_fits(count);
  if constexpr (is_std_array<T>) {
    if ((count ? *count : count_items(in)) != std::tuple_size_v<T>)
      mismatch(in, start, expected, type_spelling<T>);
    reader::nested items(in);
    for (auto& item : out) read_value(in, item);
    if (!count && !in.at_break()) in.fail("an indefinite-length array lacks its break");
  } else {
    out.clear();
    if constexpr (is_std_vector<T>)
      if (count) out.reserve(static_cast<std::size_t>(*count));
    reader::nested items(in);
    for (std::uint64_t i = 0; count ? i < *count : !in.at_break(); ++i) {
      if constexpr (is_std_vector<T> && !std::is_same_v<element, bool>) {
        read_value(in, out.emplace_back());
      } else {
        element item{};
        read_value(in, item);
        if constexpr (is_std_set<T>)
          out.insert(std::move(item));
        else
          out.push_back(std::move(item));
      }
    }
  }
}

template <class T>
std::string array_expected() {
  return "an array of " + std::to_string(std::tuple_size_v<T>) + " items";
}

template <class T>
void read_tuple(reader& in, T& out, std::size_t start, std::uint8_t initial) {
  constexpr std::string_view expected = "an array of the tuple's size";
  if (initial >> 5 != 4) mismatch(in, start, expected, type_spelling<T>);
  auto count = in.size_of(initial);
  in.array_fits(count);
  if ((count ? *count : count_items(in)) != std::tuple_size_v<T>)
    mismatch(in, start, expected, type_spelling<T>);
  {
    reader::nested items(in);
    std::apply([&](auto&... item) { (read_value(in, item), ...); }, out);
  }
  if (!count && !in.at_break()) in.fail("an indefinite-length array lacks its break");
}

template <class T>
void read_map(reader& in, T& out, std::size_t start, std::uint8_t initial) {
  if (initial >> 5 != 5) mismatch(in, start, "an object", type_spelling<T>);
  auto count = in.size_of(initial);
  in.map_fits(count);
  out.clear();
  deferred_misfits misfits;
  std::string scratch;
  reader::nested items(in);
  for (std::uint64_t i = 0; count ? i < *count : !in.at_break(); ++i) {
    std::string key(in.map_key(scratch));
    typename T::mapped_type item{};
    if (read_entry(in, misfits, std::string_view(key), [&] { read_value(in, item); }))
      out.insert_or_assign(std::move(key), std::move(item));
  }
  misfits.throw_first();
}

template <class T>
void read_record(reader& in, T& out, std::size_t start, std::uint8_t initial) {
  constexpr std::size_t n = member_count<T>;
  if (initial >> 5 != 5) mismatch(in, start, "an object", type_spelling<T>);
  auto count = in.size_of(initial);
  in.map_fits(count);
  std::array<bool, n> seen{};
  deferred_misfits misfits;
  std::string scratch;
  {
    reader::nested items(in);
    for (std::uint64_t i = 0; count ? i < *count : !in.at_break(); ++i) {
      auto key = in.map_key(scratch);
      bool known = false;
      std::size_t index = 0;
      for_each_member(out, [&](const char* name, auto& member) {
        auto at = index++;
        if (known || key != name) return;
        known = seen[at] = true;
        read_entry(in, misfits, at, [&] { read_value(in, member); });
      });
      if (!known) in.skip();  // a member T does not have
    }
  }
  std::size_t index = 0;
  const char* missing = nullptr;
  const std::string* misfit = nullptr;
  for_each_member(out, [&](const char* name, auto&) {
    auto at = index++;
    if (missing || misfit) return;
    if (!seen[at])
      missing = name;
    else
      misfit = misfits.find(at);
  });
  if (missing)
    mismatch(in, start, std::string("an object with member '") + missing + "'",
             type_spelling<T>);
  if (misfit) throw decode_error(*misfit);
}

// Values of type N that a segment of the message holds (a typed array of N
// in this machine's byte order, aligned, in memory this process may
// write), found at the reader without a copy; or nothing, the reader left
// where it was.
template <packable N>
struct values_in_place {
  N* at = nullptr;
  std::size_t count = 0;
  std::shared_ptr<void> keep;

  bool read(reader& in) {
    *this = {};
    auto start = in.at();
    if (in.left() == 0 || static_cast<std::uint8_t>(in.bytes()[start]) >> 5 != 6)
      return false;
    in.check_depth();
    std::string scratch;
    const segment_view* shared = nullptr;
    auto typed = read_tagged(in, in.next(), scratch, &shared);
    if (shared && shared->writable && typed.tag == typed_array::native_tag<N> &&
        reinterpret_cast<std::uintptr_t>(typed.bytes.data()) % alignof(N) == 0 &&
        typed.bytes.size() % sizeof(N) == 0) {
      at = reinterpret_cast<N*>(const_cast<char*>(typed.bytes.data()));
      count = typed.bytes.size() / sizeof(N);
      keep = shared->keep;
      return true;
    }
    in.seek(start);
    return false;
  }
};

// A tensor whose data a segment of the message holds reads them there
// (tensor.hpp), without a copy.
template <class T>
void read_tensor(reader& in, T& out, std::size_t start, std::uint8_t initial) {
  if (initial >> 5 != 5) not_a_tensor(in, start);
  auto count = in.size_of(initial);
  in.map_fits(count);
  typename T::shape_type shape;
  std::vector<typename T::value_type> data;
  values_in_place<typename T::value_type> shared;
  bool has_shape = false, has_data = false;
  deferred_misfits misfits;
  std::string scratch;
  {
    reader::nested items(in);
    for (std::uint64_t i = 0; count ? i < *count : !in.at_break(); ++i) {
      auto key = in.map_key(scratch);
      if (key == "shape") {
        has_shape = true;
        read_entry(in, misfits, std::size_t{0}, [&] { read_value(in, shape); });
      } else if (key == "data") {
        has_data = true;
        read_entry(in, misfits, std::size_t{1}, [&] {
          if (!shared.read(in)) read_value(in, data);
        });
      } else {
        in.skip();
      }
    }
  }
  if (!has_shape || !has_data) not_a_tensor(in, start);
  misfits.throw_first();
  auto values = shared.at ? shared.count : data.size();
  if (values != shape_count(shape))
    throw decode_error("a tensor of shape " + shape_text(shape) + " needs " +
                       std::to_string(shape_count(shape)) + " values, got " +
                       std::to_string(values));
  if (shared.at)
    out = tensor_access<T>::in_place(std::move(shape), shared.at, shared.count,
                                     std::move(shared.keep));
  else
    out = T(std::move(shape), std::move(data));
}

// The item whose initial byte, at `start`, was read; its kind decides how.
template <class T>
void read_after(reader& in, T& out, std::size_t start, std::uint8_t initial) {
  constexpr auto kind = wire_kind_of<T>;
  if constexpr (kind == wire_kind::boolean) {
    if (initial == 0xf5)
      out = true;
    else if (initial == 0xf4)
      out = false;
    else
      mismatch(in, start, "a boolean", type_spelling<T>);
  } else if constexpr (kind == wire_kind::integer) {
    out = static_cast<T>(read_integer(
        in, start, initial, static_cast<std::int64_t>(std::numeric_limits<T>::min()),
        static_cast<std::uint64_t>(std::numeric_limits<T>::max()), type_spelling<T>));
  } else if constexpr (kind == wire_kind::floating) {
    out = static_cast<T>(read_number(in, start, initial,
                                     static_cast<double>(std::numeric_limits<T>::max()),
                                     type_spelling<T>));
  } else if constexpr (kind == wire_kind::enumeration) {
    using underlying = std::underlying_type_t<T>;
    out = static_cast<T>(static_cast<underlying>(
        read_integer(in, start, initial,
                     static_cast<std::int64_t>(std::numeric_limits<underlying>::min()),
                     static_cast<std::uint64_t>(std::numeric_limits<underlying>::max()),
                     type_spelling<T>)));
  } else if constexpr (kind == wire_kind::string) {
    if (initial >> 5 != 3) mismatch(in, start, "a string", type_spelling<T>);
    out.clear();
    in.text_into(in.size_of(initial), out);
  } else if constexpr (kind == wire_kind::optional) {
    if (initial == 0xf6)
      out.reset();
    else
      read_after(in, out.emplace(), start, initial);
  } else if constexpr (kind == wire_kind::typed_array) {
    constexpr bool fixed = is_std_array<T>;
    auto expected = [] {
      if constexpr (fixed)
        return array_expected<T>() + ", or a typed array of as many of this element type";
      else
        return std::string("an array, or a typed array of this element type");
    };
    std::uint8_t major = initial >> 5;
    if (major == 6) {
      std::string scratch;
      auto typed = read_tagged(in, initial, scratch);
      if (!typed_array::unpack(typed.tag, typed.bytes.data(), typed.bytes.size(), out))
        mismatch(in, start, expected(), type_spelling<T>);
    } else if (major == 2) {
      mismatch(in, start, expected(), type_spelling<T>);
    } else if constexpr (fixed) {
      read_items(in, out, start, initial, array_expected<T>());
    } else {
      read_items(in, out, start, initial, "an array");
    }
  } else if constexpr (kind == wire_kind::sequence) {
    if constexpr (is_std_array<T>)
      read_items(in, out, start, initial, array_expected<T>());
    else
      read_items(in, out, start, initial, "an array");
  } else if constexpr (kind == wire_kind::map) {
    read_map(in, out, start, initial);
  } else if constexpr (kind == wire_kind::tuple) {
    read_tuple(in, out, start, initial);
  } else if constexpr (kind == wire_kind::record) {
    read_record(in, out, start, initial);
  } else if constexpr (kind == wire_kind::tensor) {
    read_tensor(in, out, start, initial);
  } else if constexpr (kind == wire_kind::json || kind == wire_kind::nlohmann) {
    if constexpr (json_codec_included<T>) {
      in.seek(start);
      json_codec<T>::read(in, out);
    } else {
      static_assert(json_codec_included<T>, "lp wire type: " LP_DETAIL_WHY_JSON_HEADER);
    }
  } else {
    static_assert(unhandled_kind<T>,
                  "the typed CBOR reader has no case for this wire kind");
  }
}

template <class T>
void read_value(reader& in, T& out) {
  in.check_depth();
  auto start = in.at();
  read_after(in, out, start, in.next());
}

// The item at the reader as a new T.
template <class T>
T read_item(reader& in) {
  if constexpr (wire_kind_of<T> == wire_kind::nlohmann &&
                !std::is_default_constructible_v<T>) {
    // nlohmann can make some types it cannot assign to.
    in.check_depth();
    if constexpr (json_codec_included<T>)
      return json_codec<T>::make(in);
    else
      static_assert(json_codec_included<T>, "lp wire type: " LP_DETAIL_WHY_JSON_HEADER);
  } else {
    T value{};
    read_value(in, value);
    return value;
  }
}

// The item at `at` as a T; `at` moves past it. Throws decode_error for a
// value that does not fit T, and what the generic reader throws for bytes
// that are not a CBOR item (even where a misfit comes first in them).
template <class T>
T read_as(std::string_view bytes, std::size_t& at, std::size_t max_depth) {
  if constexpr (has_wire_form<T>) {
    reader in(bytes, max_depth);
    in.seek(at);
    try {
      T value = read_item<T>(in);
      at = in.at();
      return value;
    } catch (const decode_error&) {
      std::size_t from = at;
      reader(bytes, max_depth).skip_at(from);  // bytes that are not CBOR: said so instead
      throw;
    }
  } else {
    explain_wire_type<T>();  // stops the build
    std::abort();
  }
}

}  // namespace lp::detail::cbor
