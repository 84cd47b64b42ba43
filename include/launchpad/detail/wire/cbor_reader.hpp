#pragma once

// Reads a CBOR body (RFC 8949) into a json value. Ours rather than
// nlohmann's from_cbor, which copies a byte string one byte at a time (15-20
// ms for 4 MB here, where this takes a memcpy) and recurses without a limit.
// It accepts what nlohmann's to_cbor writes and what other languages' CBOR
// libraries commonly send, and refuses the rest with a message:
// - nesting deeper than max_depth (std::length_error);
// - text strings and map keys that are not UTF-8 (std::domain_error);
// - tags on anything but a byte string (the only tags we give meaning to are
//   RFC 8746 typed arrays, kept as the byte string's subtype);
// - map keys that are not text, simple values other than false/true/null,
//   truncated items and trailing bytes (cbor::malformed).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/wire/utf8.hpp>
#include <launchpad/wire.hpp>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::cbor {

struct malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class reader {
 public:
  reader(std::string_view bytes, std::size_t max_depth) : in_(bytes), max_depth_(max_depth) {}

  json read_all() {
    json value = read(0);
    at_end();
    return value;
  }

  // The item that starts at `at`, which is moved past it.
  json read_at(std::size_t& at) {
    at_ = at;
    json value = read(0);
    at = at_;
    return value;
  }

  // Checks the whole body as read_all does, without building a value, and
  // returns where each item of the array it holds starts; nothing if the
  // body is not an array.
  std::optional<std::vector<std::size_t>> array_items() {
    auto initial = next();
    if (initial >> 5 != 4) {
      at_ = 0;
      skip(0);
      at_end();
      return std::nullopt;
    }
    auto count = size_of(initial);
    if (count && *count > in_.size() - at_) fail("an array is longer than the bytes left");
    std::vector<std::size_t> starts;
    if (count) starts.reserve(static_cast<std::size_t>(*count));
    for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
      starts.push_back(at_);
      skip(1);
    }
    at_end();
    return starts;
  }

 private:
  // A length, or none for an indefinite-length item (additional information
  // 31), which ends at a break.
  using length = std::optional<std::uint64_t>;

  [[noreturn]] void fail(const std::string& what) const {
    throw malformed(what + " (at byte " + std::to_string(at_) + ")");
  }

  void at_end() const {
    if (at_ != in_.size())
      fail(std::to_string(in_.size() - at_) + " bytes after the end of the value");
  }

  std::uint8_t next() {
    if (at_ >= in_.size()) fail("the body ends in the middle of a value");
    return static_cast<std::uint8_t>(in_[at_++]);
  }

  std::string_view take(std::uint64_t count) {
    if (count > in_.size() - at_) fail("a string is longer than the bytes left");
    auto out = in_.substr(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return out;
  }

  // The argument of an initial byte: a count, a value or a tag number.
  std::uint64_t argument(std::uint8_t info) {
    if (info < 24) return info;
    if (info > 27) fail("reserved additional information " + std::to_string(info));
    std::uint64_t value = 0;
    for (int i = 0, width = 1 << (info - 24); i < width; ++i) value = (value << 8) | next();
    return value;
  }

  // The length that follows a string's, array's or map's initial byte.
  length size_of(std::uint8_t initial) {
    if ((initial & 0x1f) == 31) return std::nullopt;
    return argument(initial & 0x1f);
  }

  // The bytes of a byte or text string (major type 2 or 3), chunks joined.
  std::string string_bytes(std::uint8_t major, length size) {
    if (size) return std::string(take(*size));
    std::string out;
    for (;;) {
      auto initial = next();
      if (initial == 0xff) return out;
      if (initial >> 5 != major || (initial & 0x1f) == 31)
        fail("an indefinite-length string holds a chunk of another kind");
      out += take(argument(initial & 0x1f));
    }
  }

  json binary(length size, std::optional<std::uint64_t> tag) {
    // Pointers of the same type make assign one memcpy.
    auto as_bytes = [](std::string_view view) {
      auto* first = reinterpret_cast<const std::uint8_t*>(view.data());
      return std::vector<std::uint8_t>(first, first + view.size());
    };
    auto bytes = size ? as_bytes(take(*size)) : as_bytes(string_bytes(2, size));
    return tag ? json::binary(std::move(bytes), *tag) : json::binary(std::move(bytes));
  }

  json text(length size) {
    std::string out = string_bytes(3, size);
    if (!valid_utf8(out)) throw std::domain_error("a text string is not valid UTF-8");
    return out;
  }

  static double half(std::uint16_t bits) {
    int exponent = (bits >> 10) & 0x1f;
    double mantissa = bits & 0x3ff;
    double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                       : exponent == 31 ? (mantissa == 0 ? std::numeric_limits<double>::infinity()
                                                         : std::numeric_limits<double>::quiet_NaN())
                                        : std::ldexp(mantissa + 1024, exponent - 25);
    return bits & 0x8000 ? -magnitude : magnitude;
  }

  json simple(std::uint8_t info) {
    switch (info) {
      case 20: return false;
      case 21: return true;
      case 22: return nullptr;
      case 25: return half(static_cast<std::uint16_t>(argument(info)));
      case 26: {
        auto bits = static_cast<std::uint32_t>(argument(info));
        float value;
        std::memcpy(&value, &bits, sizeof value);
        return static_cast<double>(value);
      }
      case 27: {
        auto bits = argument(info);
        double value;
        std::memcpy(&value, &bits, sizeof value);
        return value;
      }
      case 31: fail("a break outside an indefinite-length item");
      default: fail("simple value " + std::to_string(info) + " is not supported");
    }
  }

  bool at_break() {
    if (at_ < in_.size() && static_cast<std::uint8_t>(in_[at_]) == 0xff) {
      ++at_;
      return true;
    }
    return false;
  }

  json array(length count, std::size_t depth) {
    // Each item takes a byte at least, so a count larger than the bytes
    // left is malformed: refused before any memory is reserved for it.
    if (count && *count > in_.size() - at_) fail("an array is longer than the bytes left");
    json out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    if (count) items.reserve(static_cast<std::size_t>(*count));
    for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i)
      items.push_back(read(depth + 1));
    return out;
  }

  json map(length count, std::size_t depth) {
    if (count && *count > (in_.size() - at_) / 2) fail("a map is longer than the bytes left");
    json out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
      auto initial = next();
      if (initial >> 5 != 3) fail("a map key is not a text string");
      auto key = text(size_of(initial));
      members[key.get_ref<const std::string&>()] = read(depth + 1);
    }
    return out;
  }

  json read(std::size_t depth) {
    if (depth > max_depth_)
      throw std::length_error("it nests deeper than " + std::to_string(max_depth_) + " levels");
    auto initial = next();
    std::uint8_t major = initial >> 5, info = initial & 0x1f;
    if (major == 7) return simple(info);
    if (major >= 2 && major <= 5) {
      auto size = size_of(initial);
      if (major == 2) return binary(size, std::nullopt);
      if (major == 3) return text(size);
      return major == 4 ? array(size, depth) : map(size, depth);
    }
    if (info == 31) fail("major type " + std::to_string(major) + " cannot have an indefinite length");
    auto arg = argument(info);
    if (major == 0) return arg;
    if (major == 1) {
      if (arg > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail("a negative integer below -2^63");
      return -1 - static_cast<std::int64_t>(arg);
    }
    auto tagged = next();
    if (tagged >> 5 != 2)
      fail("tag " + std::to_string(arg) +
           " on something other than a byte string; the only tags understood are RFC 8746 "
           "typed arrays");
    return binary(size_of(tagged), arg);
  }

  // What read does, but keeping nothing: byte strings are passed over, text
  // strings only checked.
  void skip(std::size_t depth) {
    if (depth > max_depth_)
      throw std::length_error("it nests deeper than " + std::to_string(max_depth_) + " levels");
    auto initial = next();
    std::uint8_t major = initial >> 5, info = initial & 0x1f;
    if (major == 7) {
      simple(info);
      return;
    }
    if (major == 2 || major == 3) {
      auto size = size_of(initial);
      if (major == 3) text(size);
      else if (size) take(*size);
      else string_bytes(2, size);
      return;
    }
    if (major == 4 || major == 5) {
      auto count = size_of(initial);
      if (count && *count > (in_.size() - at_) / (major == 5 ? 2 : 1))
        fail(major == 5 ? "a map is longer than the bytes left" : "an array is longer than the bytes left");
      for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
        if (major == 5) {
          auto key = next();
          if (key >> 5 != 3) fail("a map key is not a text string");
          text(size_of(key));
        }
        skip(depth + 1);
      }
      return;
    }
    if (info == 31) fail("major type " + std::to_string(major) + " cannot have an indefinite length");
    auto arg = argument(info);
    if (major == 1 && arg > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("a negative integer below -2^63");
    if (major == 6) {
      auto tagged = next();
      if (tagged >> 5 != 2)
        fail("tag " + std::to_string(arg) +
             " on something other than a byte string; the only tags understood are RFC 8746 "
             "typed arrays");
      auto size = size_of(tagged);
      if (size) take(*size);
      else string_bytes(2, size);
    }
  }

  std::string_view in_;
  std::size_t at_ = 0;
  std::size_t max_depth_;
};

inline json read(std::string_view bytes, std::size_t max_depth) {
  return reader(bytes, max_depth).read_all();
}

}  // namespace lp::detail::cbor
