#pragma once

// cbor::write: a C++ value appended to a body as CBOR, straight from the
// value: a vector of numbers or a tensor is one memcpy into the body (or,
// in a gathered body, no copy at all). The one writer of every wire type;
// JSON is written from its bytes (json_encode.hpp).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace lp::detail::cbor {

// An item's initial byte and its argument, in the shortest form, appended
// at once (a byte at a time costs a capacity check each).
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
  char bytes[9];
  bytes[0] = static_cast<char>(initial | (width == 1   ? 24
                                          : width == 2 ? 25
                                          : width == 4 ? 26
                                                       : 27));
  for (int i = 0; i < width; ++i)
    bytes[1 + i] = static_cast<char>((argument >> (8 * (width - 1 - i))) & 0xff);
  out.append(bytes, static_cast<std::size_t>(1 + width));
}

inline void text(std::string& out, std::string_view value) {
  head(out, 3, value.size());
  out += value;
}

// Where a large typed array sits in a body: the head of its byte string
// starts at byte `head_at` of the body (its pieces end to end), its `size`
// bytes at `data_at`. A channel to a process of this host may send them
// through shared memory instead (wire/shared_memory.hpp).
struct bulk_array {
  std::size_t head_at, data_at, size;
};

// Typed arrays at least this large are noted as bulk_arrays. Below it, two
// copies through a unix socket cost less than the passing of a segment's
// descriptor, the look-up of its mapping and the reference
// (benchmarks/README.md, "One host": where the two cross).
inline constexpr std::size_t bulk_from = std::size_t{64} << 10;

// A body that refers to the numbers of its large typed arrays instead of
// copying them, for a call whose arguments outlive the sending of its
// request (a blocking call): it is sent in pieces, the large arrays from
// where they are. One that must outlive its values (an async call's)
// copies them all. Either notes where its large arrays are.
class gathered {
 public:
  // Smaller arrays are copied, as are all after the first max_borrowed.
  static constexpr std::size_t borrow_from = std::size_t{64} << 10;
  static constexpr std::size_t max_borrowed = 64;

  explicit gathered(bool borrows = true) : borrows_(borrows) {}

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
    borrowed_size_ = 0;
    arrays_.clear();
  }

  std::string& bytes() { return bytes_; }
  bool borrows() const { return !borrowed_.empty(); }

  std::size_t size() const { return bytes_.size() + borrowed_size_; }

  // The bytes of a typed array whose byte string's head starts at
  // `head_at`.
  void numbers(const char* data, std::size_t size, std::size_t head_at) {
    if (size >= bulk_from) arrays_.push_back({head_at, this->size(), size});
    if (!borrows_ || size < borrow_from || borrowed_.size() == max_borrowed) {
      bytes_.append(data, size);
      return;
    }
    borrowed_.push_back({bytes_.size(), std::string_view(data, size)});
    borrowed_size_ += size;
  }

  // Where its large typed arrays are, in order.
  std::span<const bulk_array> arrays() const { return arrays_; }

  // The body, as consecutive pieces; valid until the next change.
  LP_API std::span<const std::string_view> pieces();

 private:
  struct borrowed {
    std::size_t at;  // where in bytes_ they go
    std::string_view data;
  };
  bool borrows_;
  std::string bytes_;
  std::vector<borrowed> borrowed_;
  std::size_t borrowed_size_ = 0;
  std::vector<bulk_array> arrays_;
  std::vector<std::string_view> pieces_;
};

// Where cbor::write puts what it writes: a string, or a gathered body.
inline std::string& bytes_of(std::string& out) {
  return out;
}
inline std::string& bytes_of(gathered& out) {
  return out.bytes();
}

// What the writer writes to, whichever of the two: so each type's writer
// is compiled once.
class sink {
 public:
  explicit sink(std::string& bytes) : bytes(bytes) {}
  explicit sink(gathered& body) : bytes(body.bytes()), gathered_(&body) {}

  std::string& bytes;

  // Where the next byte goes, in the whole body.
  std::size_t position() const { return gathered_ ? gathered_->size() : bytes.size(); }

  // The bytes of a typed array whose byte string's head starts at
  // `head_at`, which a gathered body may refer to.
  void numbers(const char* data, std::size_t size, std::size_t head_at) {
    if (gathered_)
      gathered_->numbers(data, size, head_at);
    else
      bytes.append(data, size);
  }

 private:
  gathered* gathered_ = nullptr;
};

template <packable T>
void numbers(sink& out, const T* data, std::size_t count) {
  head(out.bytes, 6, typed_array::native_tag<T>);
  auto head_at = out.position();
  head(out.bytes, 2, count * sizeof(T));
  out.numbers(reinterpret_cast<const char*>(data), count * sizeof(T), head_at);
}

inline void float64(std::string& bytes, double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  char out[9] = {static_cast<char>(0xfb)};
  for (int i = 0; i < 8; ++i)
    out[1 + i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
  bytes.append(out, sizeof out);
}

// The value's kind decides its form (docs/protocol.md, "Values").
template <class T>
void write_value(sink& out, const T& value) {
  constexpr auto kind = wire_kind_of<T>;
  auto& bytes = out.bytes;
  if constexpr (kind == wire_kind::boolean) {
    bytes += static_cast<char>(value ? 0xf5 : 0xf4);
  } else if constexpr (kind == wire_kind::integer) {
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) return head(bytes, 1, static_cast<std::uint64_t>(-(value + 1)));
    }
    head(bytes, 0, static_cast<std::uint64_t>(value));
  } else if constexpr (kind == wire_kind::floating) {
    float64(bytes, static_cast<double>(value));
  } else if constexpr (kind == wire_kind::enumeration) {
    write_value(out, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (kind == wire_kind::string) {
    text(bytes, value);
  } else if constexpr (kind == wire_kind::optional) {
    if (value)
      write_value(out, *value);
    else
      bytes += static_cast<char>(0xf6);
  } else if constexpr (kind == wire_kind::typed_array) {
    numbers(out, value.data(), value.size());
  } else if constexpr (kind == wire_kind::sequence) {
    head(bytes, 4, value.size());
    for (const auto& item : value) write_value<typename T::value_type>(out, item);
  } else if constexpr (kind == wire_kind::map) {
    head(bytes, 5, value.size());
    for (const auto& [key, item] : value) {
      text(bytes, key);
      write_value(out, item);
    }
  } else if constexpr (kind == wire_kind::tuple) {
    head(bytes, 4, std::tuple_size_v<T>);
    std::apply([&](const auto&... item) { (write_value(out, item), ...); }, value);
  } else if constexpr (kind == wire_kind::record) {
    head(bytes, 5, member_count<T>);
    for_each_member(value, [&](const char* name, const auto& member) {
      text(bytes, name);
      write_value(out, member);
    });
  } else if constexpr (kind == wire_kind::tensor) {
    head(bytes, 5, 2);  // the keys in the order a json object has them
    text(bytes, "data");
    numbers(out, value.data(), value.size());
    text(bytes, "shape");
    write_value(out, value.shape());
  } else if constexpr (kind == wire_kind::json || kind == wire_kind::nlohmann) {
    if constexpr (json_codec_included<T>)
      json_codec<T>::write(bytes, value);
    else
      static_assert(json_codec_included<T>, "lp wire type: " LP_DETAIL_WHY_JSON_HEADER);
  } else {
    static_assert(unhandled_kind<T>, "cbor::write has no case for this wire kind");
  }
}

// Appends `value` to `out` (a std::string or a gathered body).
template <class Out, class T>
void write(Out& out, const T& value) {
  if constexpr (has_wire_form<T>) {
    sink to(out);
    write_value(to, value);
  } else {
    explain_wire_type<T>();
  }
}

}  // namespace lp::detail::cbor
