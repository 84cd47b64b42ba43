// libFuzzer target on lp::detail::dispatch: the whole request path of a node
// minus the socket (body bytes -> protocol::decode -> method routing ->
// argument decoding -> invocation -> reply).
//
// An input is
//
//   <format byte> <method name> '\n' <body>
//
// The format byte's low bit picks the body's format: even is JSON, odd is
// CBOR (so the seeds can start with 'j' = 0x6a or 'c' = 0x63). The method name
// runs up to the first '\n'; with no '\n' the whole rest is the method name
// and the body is empty.
//
// For ANY input, dispatch must not throw, and its reply must be one the
// protocol (docs/protocol.md) allows: see check_reply below. A violation
// traps (__builtin_trap), which libFuzzer reports as a crash.
//
// Build and run: see tests/fuzz/README.md.

#include <boost/hana/define_struct.hpp>
#include <launchpad/detail/serve/dispatch.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/service.hpp>
#include <launchpad/tensor.hpp>

#include "fuzz_types.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fz {

// The service under test. Its methods are deterministic and cheap, so that
// the fuzzer's inputs replay the same way whatever ran before them, and they
// never run into undefined behaviour of their own (overflow throws instead).
struct Fuzzed {
  std::int64_t add(std::int64_t a, std::int32_t b) {
    std::int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) throw std::overflow_error("add overflows");
    return sum;
  }
  std::uint64_t mix(std::uint8_t a, std::uint16_t b, std::uint64_t c, short d) {
    return (std::uint64_t{a} << 48) ^ (std::uint64_t{b} << 16) ^ c ^
           static_cast<std::uint16_t>(d);
  }
  double scale(double x, float factor) { return x * static_cast<double>(factor); }
  bool negate(bool b) { return !b; }
  std::string echo(const std::string& s) { return s; }
  std::string repeat(std::string s, int times) {
    if (times < 0 || times > 8) throw std::invalid_argument("repeat: times must be 0..8");
    std::string out;
    for (int i = 0; i < times; ++i) out += s;
    return out;
  }
  std::vector<std::string> split(const std::string& s, char separator) {
    std::vector<std::string> parts(1);
    for (char c : s) {
      if (c == separator)
        parts.emplace_back();
      else
        parts.back() += c;
    }
    return parts;
  }
  std::int64_t sum(const std::vector<int>& values) {
    std::int64_t total = 0;
    for (int v : values) total += v;  // at most ~2^20 values of 2^31: no overflow
    return total;
  }
  std::map<std::string, int> tally(std::map<std::string, int> counts) {
    counts["_size"] = static_cast<int>(counts.size());
    return counts;
  }
  std::optional<int> halve(std::optional<int> value) {
    if (!value) return std::nullopt;
    return *value / 2;
  }
  Point move(Point p, int dx, int dy) {
    p.x += dx;
    p.y += dy;
    if (std::abs(p.x) > 1e300 || std::abs(p.y) > 1e300)
      throw std::out_of_range("move: off the plane");
    return p;
  }
  Box grow(const Box& box, double by) {
    Box out = box;
    out.width *= by;
    out.height *= by;
    out.tags.push_back(static_cast<int>(out.tags.size()));
    return out;
  }
  void forget() { remembered.clear(); }
  void remember(const std::string& s) {
    if (remembered.size() < 64) remembered.push_back(s);
  }
  // Typed arrays in and out: a float vector widened to doubles, and a 2-D
  // tensor of int16 transposed.
  std::vector<double> widen(const std::vector<float>& values) {
    return std::vector<double>(values.begin(), values.end());
  }
  lp::tensor<std::int16_t> transpose(const lp::tensor<std::int16_t>& t) {
    if (t.rank() != 2) throw std::invalid_argument("transpose: a matrix, please");
    lp::tensor<std::int16_t> out({t.shape()[1], t.shape()[0]});
    if (t.size() == 0) return out;  // a [2^60, 0] tensor is valid, and empty
    for (std::size_t i = 0; i < t.shape()[0]; ++i)
      for (std::size_t j = 0; j < t.shape()[1]; ++j) out(j, i) = t(i, j);
    return out;
  }
  // The other kinds of docs/protocol.md's table: a fixed array of numbers
  // (a typed array in CBOR), a set, a hash map, an enum, any json value.
  std::array<float, 3> rgb(const std::array<float, 3>& v) { return {v[2], v[1], v[0]}; }
  std::set<int> uniq(const std::set<int>& values) { return values; }
  std::unordered_map<std::string, double> weigh(
      std::unordered_map<std::string, double> weights) {
    weights["_n"] = static_cast<double>(weights.size());
    return weights;
  }
  Color paint(Color c) { return c == Color::red ? Color::blue : Color::red; }
  lp::json raw(const lp::json& value) { return value; }
  int fail(const std::string& how) {
    if (how == "int") throw 42;
    if (how == "logic") throw std::logic_error("a logic error");
    throw std::runtime_error(how);
  }

  std::vector<std::string> remembered;
};

}  // namespace fz

LP_SERVICE(fz::Fuzzed, add, mix, scale, negate, echo, repeat, split, sum, tally, halve,
           move, grow, forget, remember, widen, transpose, rgb, uniq, weigh, paint, raw,
           fail);

namespace {

using lp::json;
namespace protocol = lp::detail::protocol;

constexpr std::string_view methods[] = {
    "add",   "mix",   "scale", "negate", "echo",   "repeat",   "split", "sum",
    "tally", "halve", "move",  "grow",   "forget", "remember", "widen", "transpose",
    "rgb",   "uniq",  "weigh", "paint",  "raw",    "fail"};

// Set LP_FUZZ_VERBOSE=1 to have each violation say what it is before it traps.
bool verbose() {
  static const bool on = std::getenv("LP_FUZZ_VERBOSE") != nullptr;
  return on;
}

// Set LP_FUZZ_TOLERATE_KNOWN=1 to accept, while fuzzing for other bugs, the
// replies of the known findings that tests/fuzz/regressions/ reproduce (see
// tests/fuzz/README.md): strings that are not UTF-8 in a reply, and a JSON
// reply that NaN or infinity changes on the wire (they are sent as null).
bool tolerate_known() {
  static const bool on = std::getenv("LP_FUZZ_TOLERATE_KNOWN") != nullptr;
  return on;
}

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    unsigned char c = byte(i);
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80)
      n = 0;
    else if (c >= 0xc2 && c <= 0xdf)
      n = 1;
    else if (c == 0xe0)
      n = 2, lo = 0xa0;
    else if (c == 0xed)
      n = 2, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef)
      n = 2;
    else if (c == 0xf0)
      n = 3, lo = 0x90;
    else if (c == 0xf4)
      n = 3, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3)
      n = 3;
    else
      return false;
    if (s.size() - i - 1 < n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      unsigned char d = byte(i + k);
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf)) return false;
    }
    i += n + 1;
  }
  return true;
}

// Whether every string and object key in the value is UTF-8: JSON cannot
// carry anything else, and a CBOR text string must be UTF-8 (RFC 8949 3.1).
bool all_utf8(const json& value) {
  if (value.is_string()) return is_utf8(value.get_ref<const std::string&>());
  if (value.is_array()) {
    for (const auto& item : value)
      if (!all_utf8(item)) return false;
  }
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!is_utf8(it.key()) || !all_utf8(it.value())) return false;
  }
  return true;
}

// A reply as dispatch wrote it, decoded.
struct reply {
  int status;
  protocol::format format;
  json body;
};

[[noreturn]] void violated(const char* what, const reply* r) {
  if (verbose()) {
    std::fprintf(stderr, "lp fuzz: invariant violated: %s\n", what);
    if (r) {
      std::fprintf(stderr, "lp fuzz: status %d, body %s\n", r->status,
                   r->body.dump(-1, ' ', true, json::error_handler_t::replace).c_str());
    }
  }
  __builtin_trap();
}

#define LP_FUZZ_CHECK(condition, reply)            \
  do {                                             \
    if (!(condition)) violated(#condition, reply); \
  } while (0)

bool is_known_method(std::string_view method) {
  for (auto m : methods)
    if (m == method) return true;
  return false;
}

void check_reply(const reply& r, const std::string& method, protocol::format format) {
  const auto* rp = &r;
  LP_FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 404 || r.status == 500,
                rp);
  LP_FUZZ_CHECK(r.format == format, rp);
  LP_FUZZ_CHECK(r.body.is_object() && r.body.size() == 1, rp);
  if (r.status == 200) {
    LP_FUZZ_CHECK(r.body.contains("result"), rp);
    LP_FUZZ_CHECK(is_known_method(method), rp);
  } else {
    LP_FUZZ_CHECK(r.body.contains("error"), rp);
    const json& error = r.body["error"];
    LP_FUZZ_CHECK(error.is_object() && error.size() == 4, rp);
    for (const char* field : {"code", "message", "node", "method"})
      LP_FUZZ_CHECK(error.contains(field) && error[field].is_string(), rp);
    LP_FUZZ_CHECK(error["node"] == "fuzz", rp);
    // The method, as given when it is text (else it may be made text).
    if (is_utf8(method)) LP_FUZZ_CHECK(error["method"].get<std::string>() == method, rp);
    const auto code = error["code"].get<std::string>();
    if (r.status == 400) LP_FUZZ_CHECK(code == "bad_request", rp);
    if (r.status == 404) {
      LP_FUZZ_CHECK(code == "no_such_method", rp);
      LP_FUZZ_CHECK(!is_known_method(method), rp);
    }
    if (r.status == 500) LP_FUZZ_CHECK(code == "remote_exception", rp);
  }
  // Every string of the reply is text a client can read.
  if (!tolerate_known()) LP_FUZZ_CHECK(all_utf8(r.body), rp);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static lp::detail::typed_node<fz::Fuzzed> node(std::make_unique<fz::Fuzzed>());
  if (size == 0) return 0;
  const auto format = (data[0] & 1) ? protocol::format::cbor : protocol::format::json;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto separator = rest.find('\n');
  std::string method(rest.substr(0, separator));
  std::string_view body = separator == std::string_view::npos
                              ? std::string_view{}
                              : rest.substr(separator + 1);
  // Not caught: dispatch must never throw, and libFuzzer reports what escapes.
  lp::detail::written_reply written;
  int status = lp::detail::dispatch(node, "fuzz", method, format, format, body, written);
  std::string whole;
  std::string_view bytes = written.joined(whole);
  // What the client receives must be what the node meant to send: the
  // reply decodes.
  json decoded;
  try {
    decoded = protocol::decode(bytes, format);
  } catch (const std::exception& e) {
    if (verbose())
      std::fprintf(stderr, "lp fuzz: the reply does not decode: %s\n", e.what());
    violated("the reply decodes", nullptr);
  }
  check_reply(reply{status, format, std::move(decoded)}, method, format);
  return 0;
}
