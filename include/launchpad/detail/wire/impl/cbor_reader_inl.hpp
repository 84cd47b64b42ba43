#pragma once

// cbor_reader.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/cbor_reader.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail::cbor {

LP_API json read(std::string_view bytes, std::size_t max_depth) {
  return reader(bytes, max_depth).read_all();
}

LP_API json reader::read_all() {
  json value = read();
  at_end();
  return value;
}

LP_API json reader::read_at(std::size_t& at) {
  at_ = at;
  json value = read();
  at = at_;
  return value;
}

LP_API std::optional<std::vector<std::size_t>> reader::array_items() {
  auto initial = next();
  if (initial >> 5 != 4) {
    at_ = 0;
    skip();
    at_end();
    return std::nullopt;
  }
  auto count = size_of(initial);
  array_fits(count);
  std::vector<std::size_t> starts;
  if (count) starts.reserve(static_cast<std::size_t>(*count));
  nested items(*this);
  for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
    starts.push_back(at_);
    skip();
  }
  at_end();
  return starts;
}

LP_API json reader::read() {
  check_depth();
  auto initial = next();
  std::uint8_t major = initial >> 5, info = initial & 0x1f;
  if (major == 7) return simple(info);
  if (major >= 2 && major <= 5) {
    auto size = size_of(initial);
    if (major == 2) {
      std::string scratch;
      return binary(string_bytes(2, size, scratch), std::nullopt);
    }
    if (major == 3) {
      std::string out;
      text_into(size, out);
      return out;
    }
    return major == 4 ? array(size) : map(size);
  }
  if (info == 31) indefinite_number(major);
  auto arg = argument(info);
  if (major == 0) return arg;
  if (major == 1) return negative(arg);
  std::string scratch;
  return binary(tagged_bytes(arg, scratch), arg);
}

LP_API void reader::skip() {
  check_depth();
  auto initial = next();
  std::uint8_t major = initial >> 5, info = initial & 0x1f;
  if (major == 7) {
    simple(info);
    return;
  }
  if (major == 2 || major == 3) {
    auto size = size_of(initial);
    if (major == 3) {
      std::string scratch;
      text(size, scratch);
    } else {
      skip_bytes(size);
    }
    return;
  }
  if (major == 4 || major == 5) {
    auto count = size_of(initial);
    if (major == 5)
      map_fits(count);
    else
      array_fits(count);
    nested items(*this);
    for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
      if (major == 5) map_key();
      skip();
    }
    return;
  }
  if (info == 31) indefinite_number(major);
  auto arg = argument(info);
  if (major == 1) negative(arg);
  if (major == 6) {
    std::string scratch;
    tagged_bytes(arg, scratch);
  }
}

LP_API std::string_view reader::segment_bytes(const segment_view** shared) {
  auto malformed_reference = [this] {
    fail(
        "a reference to shared memory is an array of 3 unsigned integers: [segment, "
        "offset, length]");
  };
  if (next() != 0x83) malformed_reference();
  std::uint64_t field[3];
  for (auto& value : field) {
    auto initial = next();
    if (initial >> 5 != 0) malformed_reference();
    value = argument(initial & 0x1f);
  }
  auto [index, offset, length] = field;
  auto segments = segments_in_scope();
  if (segments.empty())
    fail(
        "a reference to shared memory in a message that brought no segment (send the "
        "bytes in the body, or the segments with the message: docs/protocol.md)");
  if (index >= segments.size())
    fail("a reference to segment " + std::to_string(index) +
         " of a message that brought " + std::to_string(segments.size()));
  const auto& segment = segments[index];
  if (offset > segment.size || length > segment.size - offset)
    fail("a reference to bytes " + std::to_string(offset) + " to " +
         std::to_string(offset) + " + " + std::to_string(length) + " of a segment of " +
         std::to_string(segment.size) + " bytes");
  if (shared) *shared = &segment;
  return {segment.data + offset, static_cast<std::size_t>(length)};
}

LP_API void reader::fail(const std::string& what) const {
  throw malformed(what + " (at byte " + std::to_string(at_) + ")");
}

LP_API void reader::too_deep() const {
  throw std::length_error("it nests deeper than " + std::to_string(max_depth_) +
                          " levels");
}

LP_API void reader::indefinite_number(std::uint8_t major) const {
  fail("major type " + std::to_string(major) + " cannot have an indefinite length");
}

LP_API void reader::skip_bytes(length size) {
  if (size) {
    take(*size);
  } else {
    std::string scratch;
    string_bytes(2, size, scratch);
  }
}

LP_API void reader::map_key() {
  std::string scratch;
  map_key(scratch);
}

LP_API json reader::binary(std::string_view view, std::optional<std::uint64_t> tag) {
  // Pointers of the same type make assign one memcpy.
  auto* first = reinterpret_cast<const std::uint8_t*>(view.data());
  std::vector<std::uint8_t> bytes(first, first + view.size());
  return tag ? json::binary(std::move(bytes), *tag) : json::binary(std::move(bytes));
}

LP_API double reader::half(std::uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  double mantissa = bits & 0x3ff;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                     : exponent == 31
                         ? (mantissa == 0 ? std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::quiet_NaN())
                         : std::ldexp(mantissa + 1024, exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

LP_API json reader::simple(std::uint8_t info) {
  switch (info) {
    case 20:
      return false;
    case 21:
      return true;
    case 22:
      return nullptr;
    case 25:
    case 26:
    case 27:
      return floating(info);
    case 31:
      fail("a break outside an indefinite-length item");
    default:
      fail("simple value " + std::to_string(info) + " is not supported");
  }
}

LP_API json reader::array(length count) {
  array_fits(count);
  json out = json::array();
  auto& items = out.get_ref<json::array_t&>();
  if (count) items.reserve(static_cast<std::size_t>(*count));
  nested inside(*this);
  for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i)
    items.push_back(read());
  return out;
}

LP_API json reader::map(length count) {
  map_fits(count);
  json out = json::object();
  auto& members = out.get_ref<json::object_t&>();
  nested inside(*this);
  std::string scratch;
  for (std::uint64_t i = 0; count ? i < *count : !at_break(); ++i) {
    std::string key(map_key(scratch));
    members[key] = read();
  }
  return out;
}

}  // namespace lp::detail::cbor
