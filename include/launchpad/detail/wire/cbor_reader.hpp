#pragma once

// The one CBOR lexer (RFC 8949). cbor::reader reads item heads, strings and
// simple values from a body, counts nesting, and says what is wrong with
// bytes that are not CBOR. On it are built
// - the generic reader here: any item into a json value (read_all,
//   read_at), or only checked (skip, array_items);
// - the typed reader (cbor_decode.hpp), which reads an item straight into
//   a C++ value.
// Ours rather than nlohmann's from_cbor, which copies a byte string one byte
// at a time (15-20 ms for 4 MB here, where this takes a memcpy) and recurses
// without a limit. It accepts what C++ peers write and what other
// languages' CBOR libraries commonly send, and refuses the rest with a
// message:
// - nesting deeper than max_depth (std::length_error);
// - text strings and map keys that are not UTF-8 (std::domain_error);
// - tags on anything but a byte string (the only tags we give meaning to are
//   RFC 8746 typed arrays, kept as the byte string's subtype), or but a
//   reference to a shared-memory segment the message brought, in its place
//   (shared_bytes_tag below);
// - map keys that are not text, simple values other than false/true/null,
//   truncated items and trailing bytes (cbor::malformed).
// The lexing steps are inline; reading or checking whole items, and every
// message, is in the library's compiled part (impl/cbor_reader_inl.hpp).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/utf8.hpp>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::cbor {

struct malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No bound on nesting: for bytes we wrote ourselves from a C++ value.
inline constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

// A message between two processes of one host may carry the bytes of its
// large typed arrays in shared-memory segments (wire/shared_memory.hpp)
// rather than in its body. In the body such an array's byte string is then
// this tag on an array [segment, offset, length]: its bytes are
// [offset, offset + length) of the message's segment number `segment`.
// (protocol.toml's same_host.reference_tag.)
inline constexpr std::uint64_t shared_bytes_tag = protocol::same_host::reference_tag;

// A segment of the message being read, as its reader sees it: its bytes
// (writable where this process may write them), and what keeps them mapped.
struct segment_view {
  char* data = nullptr;
  std::size_t size = 0;
  bool writable = false;
  std::shared_ptr<void> keep{};
};

// The segments of the message this thread decodes, while a segment_scope
// lives: a reference in its body reads them. Outside one, a reference is
// malformed.
inline std::span<const segment_view>& segments_in_scope() {
  thread_local std::span<const segment_view> segments;
  return segments;
}

class segment_scope {
 public:
  explicit segment_scope(std::span<const segment_view> segments)
      : before_(segments_in_scope()) {
    segments_in_scope() = segments;
  }
  ~segment_scope() { segments_in_scope() = before_; }
  segment_scope(const segment_scope&) = delete;
  segment_scope& operator=(const segment_scope&) = delete;

 private:
  std::span<const segment_view> before_;
};

class reader {
 public:
  // `check_text`: refuse text that is not UTF-8 (a peer's bytes); false only
  // for bytes we wrote, whose strings the caller may still have to repair.
  reader(std::string_view bytes, std::size_t max_depth, bool check_text = true)
      : in_(bytes), max_depth_(max_depth), check_text_(check_text) {}

  // ---- Whole items -------------------------------------------------------

  LP_API json read_all();

  // The item that starts at `at`, which is moved past it.
  LP_API json read_at(std::size_t& at);

  // Checks the item that starts at `at` as read_at does, without building a
  // value; `at` is moved past it.
  void skip_at(std::size_t& at) {
    at_ = at;
    skip();
    at = at_;
  }

  // Checks the whole body as read_all does, without building a value, and
  // returns where each item of the array it holds starts; nothing if the
  // body is not an array.
  LP_API std::optional<std::vector<std::size_t>> array_items();

  // The item at the current position and depth, as a json value.
  LP_API json read();

  // What read does, but keeping nothing: byte strings are passed over, text
  // strings only checked.
  LP_API void skip();

  // ---- The lexer, for the typed reader -----------------------------------

  // A length, or none for an indefinite-length item (additional information
  // 31), which ends at a break.
  using length = std::optional<std::uint64_t>;

  std::string_view bytes() const { return in_; }
  std::size_t at() const { return at_; }
  void seek(std::size_t at) { at_ = at; }
  std::size_t left() const { return in_.size() - at_; }
  std::size_t depth() const { return depth_; }

  [[noreturn]] LP_API void fail(const std::string& what) const;

  void at_end() const {
    if (at_ != in_.size())
      fail(std::to_string(in_.size() - at_) + " bytes after the end of the value");
  }

  // Every item is read at a depth: the number of arrays and maps around it.
  void check_depth() const {
    if (depth_ > max_depth_) [[unlikely]]
      too_deep();
  }

  // One more level for the items of an array or map, while it lives.
  class nested {
   public:
    explicit nested(reader& in) : in_(in) { ++in_.depth_; }
    ~nested() { --in_.depth_; }
    nested(const nested&) = delete;
    nested& operator=(const nested&) = delete;

   private:
    reader& in_;
  };

  std::uint8_t next() {
    if (at_ >= in_.size()) [[unlikely]]
      fail("the body ends in the middle of a value");
    return static_cast<std::uint8_t>(in_[at_++]);
  }

  std::string_view take(std::uint64_t count) {
    if (count > in_.size() - at_) [[unlikely]]
      fail("a string is longer than the bytes left");
    auto out = in_.substr(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return out;
  }

  // The argument of an initial byte: a count, a value or a tag number.
  std::uint64_t argument(std::uint8_t info) {
    if (info < 24) return info;
    if (info > 27) [[unlikely]]
      fail("reserved additional information " + std::to_string(info));
    std::size_t width = std::size_t{1} << (info - 24);
    if (width > in_.size() - at_) [[unlikely]] {
      at_ = in_.size();
      fail("the body ends in the middle of a value");
    }
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i)
      value = (value << 8) | static_cast<std::uint8_t>(in_[at_ + i]);
    at_ += width;
    return value;
  }

  // The length that follows a string's, array's or map's initial byte.
  length size_of(std::uint8_t initial) {
    if ((initial & 0x1f) == 31) return std::nullopt;
    return argument(initial & 0x1f);
  }

  // Whether the next byte is a break, which it then passes.
  bool at_break() {
    if (at_ < in_.size() && static_cast<std::uint8_t>(in_[at_]) == 0xff) {
      ++at_;
      return true;
    }
    return false;
  }

  // Each item takes a byte at least (a map entry two), so a count larger
  // than the bytes left is malformed: refused before any memory is
  // reserved for it.
  void array_fits(length count) const {
    if (count && *count > in_.size() - at_)
      fail("an array is longer than the bytes left");
  }
  void map_fits(length count) const {
    if (count && *count > (in_.size() - at_) / 2)
      fail("a map is longer than the bytes left");
  }

  // The bytes of a byte or text string (major type 2 or 3) whose initial
  // byte was read: a view of the body, or for an indefinite-length string
  // its chunks joined in `scratch`.
  std::string_view string_bytes(std::uint8_t major, length size, std::string& scratch) {
    if (size) return take(*size);
    scratch.clear();
    for (;;) {
      auto initial = next();
      if (initial == 0xff) return scratch;
      if (initial >> 5 != major || (initial & 0x1f) == 31)
        fail("an indefinite-length string holds a chunk of another kind");
      scratch += take(argument(initial & 0x1f));
    }
  }

  // A text string whose initial byte was read, checked as UTF-8.
  std::string_view text(length size, std::string& scratch) {
    auto out = string_bytes(3, size, scratch);
    if (check_text_ && !valid_utf8(out))
      throw std::domain_error("a text string is not valid UTF-8");
    return out;
  }

  // The same, appended to `out`.
  void text_into(length size, std::string& out) {
    std::string scratch;  // used only by an indefinite-length string
    out.append(text(size, scratch));
  }

  // A map key, which must be a text string.
  std::string_view map_key(std::string& scratch) {
    auto initial = next();
    if (initial >> 5 != 3) fail("a map key is not a text string");
    return text(size_of(initial), scratch);
  }

  // The integer of major type 1 with this argument.
  std::int64_t negative(std::uint64_t arg) const {
    if (arg > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("a negative integer below -2^63");
    return -1 - static_cast<std::int64_t>(arg);
  }

  [[noreturn]] LP_API void indefinite_number(std::uint8_t major) const;

  // After tag `tag`: the bytes it is on, a byte string of the body (joined
  // in `scratch` if it has chunks) or bytes of a segment of the message
  // (shared_bytes_tag), whose view `shared` then points to, if given (else
  // null).
  std::string_view tagged_bytes(std::uint64_t tag, std::string& scratch,
                                const segment_view** shared = nullptr) {
    if (shared) *shared = nullptr;
    auto initial = next();
    if (initial >> 5 == 2) return string_bytes(2, size_of(initial), scratch);
    if (initial >> 5 == 6 && (initial & 0x1f) != 31 &&
        argument(initial & 0x1f) == shared_bytes_tag)
      return segment_bytes(shared);
    // A Launchpad program's call with name=value arguments (its CourierClient).
    if (tag == protocol::untyped_tag::keywords)
      fail(
          "keyword arguments are not taken by a C++ method: pass its arguments "
          "positionally, in the order of its declaration");
    fail("tag " + std::to_string(tag) +
         " on something other than a byte string; the only tags understood are RFC 8746 "
         "typed arrays");
  }

  // The number of a float of major type 7 (info 25, 26, 27), read.
  double floating(std::uint8_t info) {
    if (info == 25) return half(static_cast<std::uint16_t>(argument(info)));
    if (info == 26) {
      auto bits = static_cast<std::uint32_t>(argument(info));
      float value;
      std::memcpy(&value, &bits, sizeof value);
      return static_cast<double>(value);
    }
    auto bits = argument(info);
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

 private:
  // The bytes a reference to a segment stands for (after its tag).
  LP_API std::string_view segment_bytes(const segment_view** shared);
  [[noreturn]] LP_API void too_deep() const;
  LP_API void skip_bytes(length size);
  LP_API void map_key();
  LP_API json binary(std::string_view bytes, std::optional<std::uint64_t> tag);
  LP_API static double half(std::uint16_t bits);
  LP_API json simple(std::uint8_t info);
  LP_API json array(length count);
  LP_API json map(length count);

  std::string_view in_;
  std::size_t at_ = 0;
  std::size_t depth_ = 0;
  std::size_t max_depth_;
  bool check_text_;
};

LP_API json read(std::string_view bytes, std::size_t max_depth);

}  // namespace lp::detail::cbor
