// The program the Python client's tests launch (tests/python/test_*.py):
// nodes with one method per wire type, each returning what it got (scalars,
// arrays, containers), a node whose methods fail, sleep, count and batch
// (calls), and a group "tallies" of two small counters, for attach() and
// groups.
//
//   wire_types [--lp_launch=local_mt] [--lp_... flags]
//
// It runs until it is stopped (no node has a run()).
#include <array>
#include <atomic>
#include <boost/hana/define_struct.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <launchpad/json.hpp>
#include <launchpad/launchpad.hpp>
#include <launchpad/tensor.hpp>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace wire_types {

struct Inner {
  BOOST_HANA_DEFINE_STRUCT(Inner, (int, id), (std::string, name),
                           (std::vector<float>, values));
};

// Nested structs, optionals, maps and a tensor in one value.
struct Outer {
  BOOST_HANA_DEFINE_STRUCT(Outer, (Inner, inner), (std::vector<Inner>, items),
                           (std::optional<Inner>, extra),
                           (std::map<std::string, Inner>, by_name),
                           (lp::tensor<float>, weights),
                           (std::optional<std::string>, note));
};

// A plain struct: no macro, the compiler names its fields (a Hana one inside).
struct Plain {
  std::string label;
  std::vector<float> values;
  std::optional<Inner> inner;
};

// A struct with nlohmann's own conversion (its members convert laxly).
struct Pixel {
  int r = 0, g = 0, b = 0;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Pixel, r, g, b)
};

// The wire types are spread over four services, one node each: LP_SERVICE
// stops expanding after 22 methods (its comment says 64).

// Scalars: every number type, bool and std::string.
struct Scalars {
  void nothing() {}
  bool echo_bool(bool v) { return v; }
  std::int8_t echo_int8(std::int8_t v) { return v; }
  std::int16_t echo_int16(std::int16_t v) { return v; }
  std::int32_t echo_int32(std::int32_t v) { return v; }
  std::int64_t echo_int64(std::int64_t v) { return v; }
  std::uint8_t echo_uint8(std::uint8_t v) { return v; }
  std::uint16_t echo_uint16(std::uint16_t v) { return v; }
  std::uint32_t echo_uint32(std::uint32_t v) { return v; }
  std::uint64_t echo_uint64(std::uint64_t v) { return v; }
  float echo_float(float v) { return v; }
  double echo_double(double v) { return v; }
  std::string echo_string(const std::string& v) { return v; }
  // "nan", "inf" or "-inf": results JSON cannot carry.
  double special(const std::string& which) {
    if (which == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (which == "inf") return std::numeric_limits<double>::infinity();
    if (which == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::invalid_argument("special() takes \"nan\", \"inf\" or \"-inf\", not \"" +
                                which + "\"");
  }
};

// Every element type of a typed array, and tensors.
struct Arrays {
  std::vector<float> echo_f32(const std::vector<float>& v) { return v; }
  std::vector<double> echo_f64(const std::vector<double>& v) { return v; }
  std::vector<std::int8_t> echo_i8(const std::vector<std::int8_t>& v) { return v; }
  std::vector<std::int16_t> echo_i16(const std::vector<std::int16_t>& v) { return v; }
  std::vector<std::int32_t> echo_i32(const std::vector<std::int32_t>& v) { return v; }
  std::vector<std::int64_t> echo_i64(const std::vector<std::int64_t>& v) { return v; }
  std::vector<std::uint8_t> echo_u8(const std::vector<std::uint8_t>& v) { return v; }
  std::vector<std::uint16_t> echo_u16(const std::vector<std::uint16_t>& v) { return v; }
  std::vector<std::uint32_t> echo_u32(const std::vector<std::uint32_t>& v) { return v; }
  std::vector<std::uint64_t> echo_u64(const std::vector<std::uint64_t>& v) { return v; }
  lp::tensor<float> echo_tensor_f32(const lp::tensor<float>& v) { return v; }
  lp::tensor<double> echo_tensor_f64(const lp::tensor<double>& v) { return v; }
  lp::tensor<std::int32_t> echo_tensor_i32(const lp::tensor<std::int32_t>& v) {
    return v;
  }
  lp::tensor<std::uint8_t> echo_tensor_u8(const lp::tensor<std::uint8_t>& v) { return v; }
  // n float32 values 0, 1, 2 ... without sending any.
  std::vector<float> make_f32(long n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    return v;
  }
  std::size_t count_f32(const std::vector<float>& v) { return v.size(); }
};

// Containers, optionals and structs.
struct Containers {
  std::vector<bool> echo_bools(const std::vector<bool>& v) { return v; }
  std::vector<std::string> echo_strings(const std::vector<std::string>& v) { return v; }
  std::vector<std::vector<int>> echo_nested(const std::vector<std::vector<int>>& v) {
    return v;
  }
  std::map<std::string, double> echo_string_map(const std::map<std::string, double>& v) {
    return v;
  }
  // (A map with keys other than strings has no wire form: pairs instead.)
  std::vector<std::pair<int, std::string>> echo_pairs(
      const std::vector<std::pair<int, std::string>>& v) {
    return v;
  }
  std::pair<int, std::string> echo_pair(const std::pair<int, std::string>& v) {
    return v;
  }
  std::tuple<int, double, std::string> echo_tuple(
      const std::tuple<int, double, std::string>& v) {
    return v;
  }
  std::array<double, 3> echo_array3(const std::array<double, 3>& v) { return v; }
  std::set<int> echo_set(const std::set<int>& v) { return v; }
  std::optional<int> echo_optional(std::optional<int> v) { return v; }
  std::optional<Inner> echo_optional_struct(const std::optional<Inner>& v) { return v; }
  Inner echo_inner(const Inner& v) { return v; }
  Outer echo_outer(const Outer& v) { return v; }
  Pixel echo_pixel(const Pixel& v) { return v; }
  Plain echo_plain(const Plain& v) { return v; }
};

// How calls behave: arity, errors, deadlines, futures, batches.
struct Calls {
  // sleep_ms must not hold up the other calls of a deadline test.
  static constexpr bool lp_concurrent_handlers = true;

  long add(long a, long b) { return a + b; }
  // Counts its calls, for futures.
  long bump() { return ++bumps; }
  void fail(const std::string& message) { throw std::runtime_error(message); }
  void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
  // One call per caller, one invocation per batch.
  std::vector<long> twice(const std::vector<long>& xs) {
    std::vector<long> out;
    for (long x : xs) out.push_back(2 * x);
    return out;
  }

  std::atomic<long> bumps{0};
};

struct Tally {
  long add(long x) { return total += x; }
  long get() const { return total; }
  long total = 0;
};

}  // namespace wire_types

LP_SERVICE(wire_types::Scalars, nothing, echo_bool, echo_int8, echo_int16, echo_int32,
           echo_int64, echo_uint8, echo_uint16, echo_uint32, echo_uint64, echo_float,
           echo_double, echo_string, special);
LP_SERVICE(wire_types::Arrays, echo_f32, echo_f64, echo_i8, echo_i16, echo_i32, echo_i64,
           echo_u8, echo_u16, echo_u32, echo_u64, echo_tensor_f32, echo_tensor_f64,
           echo_tensor_i32, echo_tensor_u8, make_f32, count_f32);
LP_SERVICE(wire_types::Containers, echo_bools, echo_strings, echo_nested, echo_string_map,
           echo_pairs, echo_pair, echo_tuple, echo_array3, echo_set, echo_optional,
           echo_optional_struct, echo_inner, echo_outer, echo_pixel, echo_plain);
LP_SERVICE(wire_types::Calls, add, bump, fail, sleep_ms, twice);
LP_BATCHED(wire_types::Calls, twice, 8, std::chrono::milliseconds(2));
LP_SERVICE(wire_types::Tally, add, get);

int main(int argc, char** argv) {
  lp::program p("wire_types");
  p.add_node<wire_types::Scalars>("scalars");
  p.add_node<wire_types::Arrays>("arrays");
  p.add_node<wire_types::Containers>("containers");
  p.add_node<wire_types::Calls>("calls");
  auto tallies = p.group("tallies");
  for (int i = 0; i < 2; ++i) tallies.add_node<wire_types::Tally>();
  return lp::launch<lp::local_multi_threading>(p, argc, argv);
}
