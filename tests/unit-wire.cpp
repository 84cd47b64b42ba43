// The wire forms: every supported type through JSON and CBOR, typed arrays
// and tensors, a 64 MB payload, and many threads of futures on one node.
#include <httplib.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <future>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <valarray>
#include <variant>

#include <launchpad/detail/serve/dispatch.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/wire/http1.hpp>

#include "services.hpp"
#include "wire_checks.hpp"

namespace w {
struct Sample {
  BOOST_HANA_DEFINE_STRUCT(Sample, (std::vector<float>, observation), (int, action));
  bool operator==(const Sample&) const = default;
};

// A type as deep as its data: the typed reader must bound its nesting too.
struct Tree {
  BOOST_HANA_DEFINE_STRUCT(Tree, (std::vector<Tree>, children));
  bool operator==(const Tree&) const = default;
};

// A result with large arrays in several places, which a node sends from the
// result itself.
struct Batch {
  BOOST_HANA_DEFINE_STRUCT(Batch, (std::vector<float>, observations), (std::string, tag),
                           (std::vector<std::int32_t>, actions),
                           (lp::tensor<double>, values));
  bool operator==(const Batch&) const = default;
};
struct Maker {
  Batch make(int n) const {
    Batch out{std::vector<float>(static_cast<std::size_t>(n)), "batch",
              std::vector<std::int32_t>(static_cast<std::size_t>(n)),
              lp::tensor<double>({2, static_cast<std::size_t>(n)})};
    for (int i = 0; i < n; ++i) {
      out.observations[static_cast<std::size_t>(i)] = static_cast<float>(i) / 4;
      out.actions[static_cast<std::size_t>(i)] = -i;
      out.values[static_cast<std::size_t>(i)] = i * 0.5;
    }
    return out;
  }
};

// The kinds beyond vectors and maps: fixed arrays, sets, hash maps, enums,
// lp::json, all inside a Hana struct.
enum class Color : std::uint8_t { red, green, blue = 200 };
enum Plain { zero, one };
struct Kinds {
  BOOST_HANA_DEFINE_STRUCT(Kinds, (std::array<float, 3>, rgb),
                           (std::set<std::string>, tags),
                           (std::unordered_map<std::string, std::vector<double>>, series),
                           (Color, color), (lp::json, extra));
  bool operator==(const Kinds&) const = default;
};

struct Mixer {
  std::array<float, 3> scale(const std::array<float, 3>& v, float k) const {
    return {v[0] * k, v[1] * k, v[2] * k};
  }
  std::set<std::string> tags(const std::vector<std::string>& words) const {
    return {words.begin(), words.end()};
  }
  std::unordered_map<std::string, int> count(const std::set<std::string>& words) const {
    std::unordered_map<std::string, int> out;
    for (const auto& w : words) out[w] = static_cast<int>(w.size());
    return out;
  }
  Color next(Color c) const { return c == Color::red ? Color::green : Color::blue; }
  lp::json wrap(const lp::json& j) const { return {{"wrapped", j}}; }
  Kinds kinds(Kinds k) const {
    k.tags.insert("seen");
    return k;
  }
};

using Floats = t::Box<std::vector<float>>;
using Tensor = t::Box<lp::tensor<float>>;

struct Pure {
  static constexpr bool lp_concurrent_handlers = true;
  long twice(long x) const { return 2 * x; }
};

// Notes where the vector it was given keeps its values.
struct Keeper {
  std::vector<float> keep(std::vector<float> values) {
    kept_at = values.data();
    return values;
  }
  static inline const float* kept_at = nullptr;
};
}  // namespace w

LP_SERVICE(w::Floats, echo);
LP_SERVICE(w::Tensor, echo);
LP_SERVICE(w::Pure, twice);
LP_SERVICE(w::Keeper, keep);
LP_SERVICE(w::Maker, make);
LP_SERVICE(w::Mixer, scale, tags, count, next, wrap, kinds);

namespace {
using lp::detail::from_wire;
using lp::detail::to_wire;
using wire_checks::check_both;
using wire_checks::misfit;
using wire_checks::misfit_cbor;
using wire_checks::read_as;
using wire_checks::through;
using wire_checks::written;
namespace protocol = lp::detail::protocol;

template <class T>
std::vector<T> ramp(std::size_t n) {
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<T>(i * 37 % 251) - static_cast<T>(std::is_signed_v<T> ? 100 : 0);
  return out;
}
}  // namespace

TEST_SUITE("wire") {
  TEST_CASE("every supported type round-trips through JSON and through CBOR") {
    check_both(true);
    check_both(-123456);
    check_both(std::int64_t{-9'000'000'000'000'000'000});
    check_both(std::uint64_t{18'000'000'000'000'000'000u});
    check_both(3.141592653589793);
    check_both(0.1f);
    check_both(std::string("héllo \"wire\"\n\0x", 17));
    check_both(std::vector<std::vector<std::string>>{{"a"}, {}, {"b", "c"}});
    check_both(std::map<std::string, double>{{"x", 1.0}, {"y", -2.5}});
    check_both(std::optional<int>(7));
    check_both(std::optional<int>());
    check_both(std::pair<int, std::string>(1, "one"));
    check_both(std::tuple<int, double, std::string>(1, 2.5, "three"));
    check_both(t::Point{1.5, -2});
    check_both(t::Pixel{1, 2, 3, "px"});
    check_both(std::vector<bool>{true, false, true});
    // Every number type that packs into a typed array, also nested.
    check_both(ramp<std::int8_t>(300));
    check_both(ramp<std::uint8_t>(300));
    check_both(ramp<std::int16_t>(300));
    check_both(ramp<std::uint16_t>(300));
    check_both(ramp<std::int32_t>(300));
    check_both(ramp<std::uint32_t>(300));
    check_both(ramp<std::int64_t>(300));
    check_both(ramp<std::uint64_t>(300));
    check_both(std::vector<float>{0.1f, -1e30f, 3.5f});
    check_both(std::vector<double>{0.1, -1e300, 3.5});
    check_both(std::vector<float>{});
    check_both(std::vector<std::vector<float>>{{1, 2}, {}, {3}});
    check_both(std::map<std::string, std::vector<double>>{{"w", {1, 2}}, {"b", {}}});
    check_both(std::optional<std::vector<int>>(std::vector<int>{4, 5}));
    check_both(w::Sample{{0.5f, 1.5f}, 3});
    check_both(lp::tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
    check_both(lp::tensor<std::int64_t>(
        {4}, {-1, 0, 1, std::numeric_limits<std::int64_t>::max()}));
    check_both(lp::tensor<std::uint8_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
    check_both(lp::tensor<double>({0}));
    check_both(std::vector<lp::tensor<float>>{lp::tensor<float>({1}, {1}),
                                              lp::tensor<float>({2, 1}, {2, 3})});
  }

  TEST_CASE("numbers travel as RFC 8746 typed arrays in CBOR and as arrays in JSON") {
    auto cbor =
        protocol::encode(to_wire(std::vector<float>{1, 2}), protocol::format::cbor);
    // Tag 85 (float32, little-endian) on a byte string of 8 bytes.
    CHECK(cbor.substr(0, 3) == std::string("\xd8\x55\x48", 3));
    CHECK(cbor.size() == 3 + 8);
    CHECK(protocol::encode(to_wire(std::vector<float>{1, 2}), protocol::format::json) ==
          "[1.0,2.0]");
    CHECK(protocol::encode(to_wire(lp::tensor<int>({1, 2}, {7, 8})),
                           protocol::format::json) == R"({"data":[7,8],"shape":[1,2]})");
    // Big-endian typed arrays from another machine are read too.
    std::string big_endian("\xd8\x51\x44\x3f\x80\x00\x00",
                           7);  // tag 81: float32 BE, 1.0f
    CHECK(from_wire<std::vector<float>>(protocol::decode(
              big_endian, protocol::format::cbor)) == std::vector<float>{1.0f});
    // A typed array of another element type is refused, not reinterpreted.
    auto ints = protocol::decode(
        protocol::encode(to_wire(std::vector<std::int32_t>{1}), protocol::format::cbor),
        protocol::format::cbor);
    CHECK_THROWS_WITH_AS(from_wire<std::vector<float>>(ints),
                         doctest::Contains("typed array"), lp::decode_error);
    // NaN and infinities keep their bits in CBOR.
    auto odd = through(
        std::vector<double>{std::nan(""), -std::numeric_limits<double>::infinity()},
        protocol::format::cbor);
    CHECK(std::isnan(odd[0]));
    CHECK(odd[1] == -std::numeric_limits<double>::infinity());
  }

  TEST_CASE(
      "a large vector a node's reply is done with lends its storage to the next one "
      "decoded; the store is bounded") {
    using lp::detail::spare::vectors;
    constexpr std::size_t floats = (std::size_t{2} << 20) / sizeof(float);  // 2 MiB
    std::vector<float> sent(floats);
    for (std::size_t i = 0; i < floats; ++i) sent[i] = static_cast<float>(i);
    std::string bytes;
    lp::detail::cbor::write(bytes, sent);
    auto decode = [&] {
      std::size_t at = 0;
      return lp::detail::cbor::read_as<std::vector<float>>(bytes, at,
                                                           protocol::max_depth);
    };
    // A pool thread of an earlier case that retires meanwhile frees what is
    // kept (spare::let_go): three tries.
    bool reused = false;
    const float* storage = nullptr;
    std::vector<float> first;
    for (int attempt = 0; attempt < 3 && !reused; ++attempt) {
      {
        lp::detail::written_reply reply;
        std::vector<float> result(floats, 2.5f);
        storage = result.data();
        lp::detail::write_result(reply, std::move(result), protocol::format::cbor);
        reply.clear();  // sent: the result's storage is kept
      }
      first = decode();
      reused = first.data() == storage;  // memory already faulted in
    }
    CHECK(reused);
    CHECK(first == sent);
    // Taken once: the next decodes into storage of its own.
    auto second = decode();
    CHECK(second.data() != storage);
    CHECK(second == sent);
    // Bounded: a small vector is not kept; a kept one is not lent to a
    // vector of less than half its size; a load that has gone frees them.
    std::vector<float> out;
    vectors<float>::put(std::vector<float>(1024));
    CHECK_FALSE(vectors<float>::take(1000, out));
    vectors<float>::put(std::move(first));
    CHECK_FALSE(vectors<float>::take(floats / 4, out));
    CHECK(vectors<float>::take(floats - 1, out));
    CHECK(out.data() == storage);
    CHECK(out.empty());
    vectors<float>::put(std::move(out));
    lp::detail::spare::let_go();
    CHECK_FALSE(vectors<float>::take(floats, out));
  }

  TEST_CASE(
      "the typed CBOR reader: other encodings read as the json route reads them, same "
      "errors") {
    // What other CBOR writers send: a float32 for a double, big-endian and
    // indefinite-length items, a struct's members in another order with an
    // unknown one, a repeated map key (the last wins).
    auto same = [](const std::string& bytes, const auto& expected) {
      using T = std::decay_t<decltype(expected)>;
      CHECK((read_as<T>(bytes) == expected));
      CHECK((from_wire<T>(protocol::decode(bytes, protocol::format::cbor)) == expected));
    };
    same(std::string("\xfa\x3f\xc0\x00\x00", 5), 1.5);
    same(std::string("\x02", 1), 2.0);
    same(std::string("\xd8\x51\x48\x3f\x80\x00\x00\x40\x00\x00\x00", 11),
         std::vector<float>{1, 2});
    same(std::string("\x9f\x01\x02\xff", 4), std::vector<int>{1, 2});
    same(std::string("\x7f\x61\x61\x61\x62\xff", 6), std::string("ab"));
    same(
        written(std::map<std::string, lp::json>{{"y", -2}, {"x", 1.5}, {"z", "unknown"}}),
        t::Point{1.5, -2});
    same(std::string("\xa2\x61\x6b\x01\x61\x6b\x02", 7),
         std::map<std::string, int>{{"k", 2}});
    same(written(std::vector<double>{1, 2}), std::vector<double>{1, 2});
    // A value that does not fit gets from_wire's message, whichever route.
    auto same_error = [](const std::string& bytes, auto type) {
      CHECK(!misfit_cbor<typename decltype(type)::type>(bytes).empty());
    };
    same_error(written(300), boost::hana::type_c<std::int8_t>);
    same_error(written(-1), boost::hana::type_c<unsigned>);
    same_error(written(std::string("7")), boost::hana::type_c<int>);
    same_error(written(1e300), boost::hana::type_c<float>);
    same_error(written(std::vector<std::int32_t>{1}),
               boost::hana::type_c<std::vector<float>>);
    same_error(written(std::map<std::string, double>{{"x", 1}}),
               boost::hana::type_c<t::Point>);
    same_error(
        protocol::encode(lp::json::parse(R"({"shape": [2, 2], "data": [1, 2, 3]})"),
                         protocol::format::cbor),
        boost::hana::type_c<lp::tensor<float>>);
    same_error(written(std::vector<int>{1, 2, 3}),
               boost::hana::type_c<std::tuple<int, int>>);
    // Nesting is bounded as in the json reader, whatever the type allows.
    auto nested = [](int depth) {
      std::string bytes;
      for (int i = 0; i < depth; ++i)
        bytes += std::string(
            "\xa1\x68"
            "children\x81",
            11);
      return bytes + std::string(
                         "\xa1\x68"
                         "children\x80",
                         11);
    };
    w::Tree three{{w::Tree{{w::Tree{}}}}};
    CHECK((read_as<w::Tree>(nested(2)) == three));
    CHECK(read_as<w::Tree>(nested(60)) ==
          from_wire<w::Tree>(protocol::decode(nested(60), protocol::format::cbor)));
    CHECK_THROWS_AS(read_as<w::Tree>(nested(100'000)), std::length_error);
    // Bytes that are not CBOR are refused as such, not read past.
    std::string truncated = written(std::vector<float>{1, 2}).substr(0, 6);
    CHECK_THROWS_AS(read_as<std::vector<float>>(truncated), lp::detail::cbor::malformed);
  }

  TEST_CASE("the kinds table: what crosses, and what is refused at compile time") {
    using lp::wire_type;
    using lp::detail::wire_kind;
    using lp::detail::wire_kind_of;
    static_assert(wire_type<void> && wire_type<bool> && wire_type<char> &&
                  wire_type<long double>);
    static_assert(wire_kind_of<std::vector<float>> == wire_kind::typed_array);
    static_assert(wire_kind_of<std::array<std::int16_t, 4>> == wire_kind::typed_array);
    static_assert(wire_kind_of<std::vector<bool>> == wire_kind::sequence);
    static_assert(wire_kind_of<std::array<std::string, 2>> == wire_kind::sequence);
    static_assert(wire_kind_of<std::set<int>> == wire_kind::sequence);
    static_assert(wire_kind_of<std::unordered_map<std::string, int>> == wire_kind::map);
    static_assert(wire_kind_of<std::pair<int, int>> == wire_kind::tuple);
    static_assert(wire_kind_of<w::Kinds> == wire_kind::record);
    static_assert(wire_kind_of<w::Color> == wire_kind::enumeration);
    static_assert(wire_kind_of<lp::json> == wire_kind::json);
    static_assert(wire_kind_of<t::Pixel> == wire_kind::nlohmann);
    static_assert(wire_kind_of<lp::tensor<float>> == wire_kind::tensor);
    static_assert(wire_type<w::Tree>);  // recursive, through a std::vector
    static_assert(
        wire_type<std::map<std::string,
                           std::tuple<int, std::optional<std::set<std::string>>>>>);
    // Refused, each with its reason (tests/compile_fail/refused_*.cpp).
    static_assert(!wire_type<std::variant<int, double>>);
    static_assert(!wire_type<std::map<int, double>>);
    static_assert(!wire_type<std::unordered_map<int, double>>);
    static_assert(!wire_type<std::deque<int>>);
    // Known by its members: <valarray> stays out of the library's headers.
    static_assert(wire_kind_of<std::valarray<double>> == wire_kind::refused_container);
    static_assert(!wire_type<std::unordered_set<int>>);
    static_assert(!wire_type<std::multimap<std::string, int>>);
    static_assert(!wire_type<std::string_view>);
    static_assert(!wire_type<const char*>);
    static_assert(!wire_type<int[3]>);
    static_assert(!wire_type<std::vector<std::variant<int>>>);  // wherever it sits
    static_assert(
        std::is_same_v<
            lp::detail::wire_offender<std::pair<int, std::vector<std::map<int, int>>>>,
            std::map<int, int>>);
  }

  TEST_CASE(
      "std::array, std::set, std::unordered_map, enums and lp::json: the same in JSON "
      "and CBOR") {
    check_both(std::array<float, 3>{0.5f, -1.5f, 3e30f});
    check_both(std::array<std::int64_t, 2>{-1, std::numeric_limits<std::int64_t>::min()});
    check_both(std::array<std::string, 2>{"a", "b"});
    check_both(std::array<int, 0>{});
    check_both(
        std::array<std::vector<float>, 2>{std::vector<float>{1}, std::vector<float>{}});
    check_both(std::set<int>{3, 1, 2});
    check_both(std::set<std::string>{"x", "y"});
    check_both(std::vector<std::set<int>>{{1}, {}});
    check_both(std::unordered_map<std::string, int>{{"a", 1}, {"b", -2}});
    check_both(
        std::unordered_map<std::string, std::vector<float>>{{"w", {1, 2}}, {"b", {}}});
    check_both(w::Color::blue);
    check_both(w::one);
    check_both(std::optional<std::array<double, 2>>(std::array<double, 2>{1, 2}));
    check_both(std::pair<std::set<int>, std::unordered_map<std::string, w::Color>>(
        {1}, {{"c", w::Color::green}}));
    check_both('x');
    check_both(0.5L);
    check_both(lp::json::parse(R"({"a": [1, -2, 2.5, "x", null, true, {"b": []}]})"));
    check_both(w::Kinds{{1, 2, 3},
                        {"t"},
                        {{"s", {0.5}}},
                        w::Color::red,
                        lp::json::parse(R"([1, "two"])")});
    // The forms: a std::array of numbers is the typed array a std::vector is.
    CHECK(written(std::array<float, 2>{1, 2}) == written(std::vector<float>{1, 2}));
    CHECK(protocol::encode(to_wire(std::array<float, 2>{1, 2}), protocol::format::json) ==
          "[1.0,2.0]");
    CHECK(protocol::encode(to_wire(std::set<int>{3, 1}), protocol::format::json) ==
          "[1,3]");
    CHECK(protocol::encode(to_wire(w::Color::blue), protocol::format::json) == "200");
    CHECK(protocol::encode(to_wire(std::unordered_map<std::string, int>{{"k", 1}}),
                           protocol::format::json) == R"({"k":1})");
    // A set takes repeated items as a local std::set would.
    CHECK(from_wire<std::set<int>>(lp::json::parse("[2, 1, 2]")) == std::set<int>{1, 2});
    // Hana structs convert to and from lp::json as the wire has them.
    lp::json j = w::Sample{{0.5f}, 3};
    CHECK(j.dump() == R"({"action":3,"observation":[0.5]})");
    CHECK((j.get<w::Sample>() == w::Sample{{0.5f}, 3}));
    CHECK_THROWS_AS(
        lp::json::parse(R"({"action": 1.5, "observation": []})").get<w::Sample>(),
        lp::decode_error);
  }

  TEST_CASE(
      "the new kinds are checked as strictly as a parameter, with one message in every "
      "route") {
    CHECK(misfit<std::array<int, 3>>("[1, 2]") ==
          "expected an array of 3 items (std::array<int, 3>), got array [1,2]");
    CHECK(misfit<std::array<int, 2>>("[1, 2.5]")
              .find("expected an integer (int), got number 2.5") == 0);
    auto two_floats = written(std::vector<float>{1, 2});
    CHECK(misfit_cbor<std::array<float, 3>>(two_floats)
              .find("expected an array of 3 items, or a typed array of as many of this "
                    "element type") == 0);
    CHECK(misfit_cbor<std::array<double, 2>>(two_floats)
              .find("byte string of 8 bytes tagged 85") != std::string::npos);
    CHECK(misfit<std::set<int>>("[1, 1.5]")
              .find("expected an integer (int), got number 1.5") == 0);
    CHECK(misfit<std::set<int>>(R"({"a": 1})").find("expected an array (") == 0);
    CHECK(misfit<std::unordered_map<std::string, short>>(R"({"a": 70000})")
              .find("expected an integer in range") == 0);
    CHECK(misfit<std::unordered_map<std::string, int>>("[1]").find(
              "expected an object (") == 0);
    CHECK(misfit<w::Color>("300") ==
          "expected an integer in range (w::Color), got number 300");
    CHECK(misfit<w::Color>("-1") ==
          "expected an integer in range (w::Color), got number -1");
    CHECK(misfit<w::Color>("1.5") == "expected an integer (w::Color), got number 1.5");
    CHECK(misfit<w::Color>(R"("red")") ==
          R"(expected an integer (w::Color), got string "red")");
    CHECK(misfit<std::array<float, 1>>("[1e300]").find("expected a number in range") ==
          0);
    CHECK(
        misfit<w::Kinds>(
            R"({"rgb": [1, 2, 3], "tags": [], "series": {}, "color": 7, "extra": null})") ==
        "(no error)");
    CHECK(
        misfit<w::Kinds>(
            R"({"rgb": [1, 2, 3], "tags": [], "series": {}, "color": 256, "extra": null})") ==
        "expected an integer in range (w::Color), got number 256");
    CHECK(misfit<t::Pixel>(R"({"r": 1})").find("cannot convert object") ==
          0);  // nlohmann's rules, its message
  }

  TEST_CASE(
      "several misfits: the first in the type's order is named, whatever the order on "
      "the wire") {
    // A struct's members in declaration order: x before y, though y comes
    // first on the wire.
    std::string y_then_x(
        "\xa2\x61y\x61"
        "b\x61x\x61"
        "a",
        9);
    CHECK(misfit_cbor<t::Point>(y_then_x) ==
          R"(expected a number (double), got string "a")");
    CHECK(misfit<t::Point>(R"({"y": "b", "x": "a"})") ==
          R"(expected a number (double), got string "a")");
    // A missing member before a misfit one.
    CHECK(misfit<t::Point>(R"({"y": "b"})") ==
          R"(expected an object with member 'x' (t::Point), got object {"y":"b"})");
    // A map's keys in sorted order: "a" before "b".
    std::string b_then_a(
        "\xa2\x61"
        "b\x61x\x61"
        "a\x61y",
        9);
    CHECK(misfit_cbor<std::map<std::string, int>>(b_then_a) ==
          R"(expected an integer (int), got string "y")");
    CHECK(misfit_cbor<std::unordered_map<std::string, int>>(b_then_a).find(
              R"(got string "y")") != std::string::npos);
    // A repeated key: the last one counts, as in a json object.
    std::string bad_then_good("\xa2\x61x\x61z\x61x\x01", 8);
    CHECK(read_as<std::map<std::string, int>>(bad_then_good) ==
          std::map<std::string, int>{{"x", 1}});
    CHECK(misfit_cbor<std::map<std::string, int>>(
              std::string("\xa2\x61x\x01\x61x\x61z", 8)) ==
          R"(expected an integer (int), got string "z")");
    // A tensor: its shape before its data, then whether they agree.
    CHECK(misfit<lp::tensor<float>>(R"({"data": ["x"], "shape": ["y"]})")
              .find(R"(got string "y")") != std::string::npos);
    CHECK(misfit<lp::tensor<float>>(R"({"data": [1], "shape": [2]})") ==
          "a tensor of shape [2] needs 2 values, got 1");
    CHECK(misfit<lp::tensor<float>>(R"({"data": [1]})")
              .find("expected a tensor, an object with 'shape' and 'data'") == 0);
    // An indefinite-length array: its size is checked before its items.
    std::string three_indefinite("\x9f\xf9\x3e\x00\x02\x03\xff",
                                 7);  // [1.5 (float16), 2, 3]
    CHECK(misfit_cbor<std::tuple<int, int>>(three_indefinite)
              .find("expected an array of the tuple's size") == 0);
    CHECK(misfit_cbor<std::array<int, 2>>(three_indefinite)
              .find("expected an array of 2 items") == 0);
    CHECK(read_as<std::tuple<double, int, int>>(three_indefinite) ==
          std::tuple<double, int, int>(1.5, 2, 3));
    CHECK(read_as<std::array<double, 3>>(three_indefinite) ==
          std::array<double, 3>{1.5, 2, 3});
    // Bytes that are not CBOR are said so, even after a misfit.
    CHECK_THROWS_AS(read_as<std::vector<int>>(std::string("\x82\x61x", 3)),
                    lp::detail::cbor::malformed);
    CHECK_THROWS_AS(read_as<std::vector<int>>(std::string("\x82\x61x\x7f\x61", 5)),
                    lp::detail::cbor::malformed);
    CHECK_THROWS_AS(read_as<std::vector<int>>(std::string("\x82\x61x\x61\xff", 5)),
                    std::domain_error);
  }

  TEST_CASE("a JSON body and a CBOR body nest as deep before they are refused") {
    for (int depth = 120; depth <= 135; ++depth) {
      CAPTURE(depth);
      std::string json_body = std::string(static_cast<std::size_t>(depth), '[') +
                              std::string(static_cast<std::size_t>(depth), ']');
      std::string cbor_body =
          std::string(static_cast<std::size_t>(depth - 1), '\x81') + "\x80";
      bool json_ok = true, cbor_ok = true;
      try {
        lp::detail::arguments args(json_body, protocol::format::json);
        if (depth > 1) args.get<lp::json>(0);
      } catch (const std::length_error&) {
        json_ok = false;
      }
      try {
        lp::detail::arguments args(cbor_body, protocol::format::cbor);
        if (depth > 1) args.get<lp::json>(0);
      } catch (const std::length_error&) {
        cbor_ok = false;
      }
      CHECK(json_ok == cbor_ok);
      CHECK(json_ok == (depth <= static_cast<int>(protocol::max_depth) + 1));
    }
  }

  TEST_CASE("a gathered body refers to large arrays and reads as the copied one") {
    auto whole = [](lp::detail::cbor::gathered& body) {
      std::string out;
      for (auto piece : body.pieces()) out += piece;
      return out;
    };
    std::vector<float> big(100'000, 0.5f);
    auto sample =
        std::make_tuple(1, big, std::string("between"), std::vector<float>{1, 2}, big);
    lp::detail::cbor::gathered body;
    lp::detail::cbor::write(body, sample);
    CHECK(body.pieces().size() == 5);  // bytes, big, bytes, big, bytes
    CHECK(body.pieces()[1].data() ==
          reinterpret_cast<const char*>(std::get<1>(sample).data()));
    CHECK(whole(body) == written(sample));
    CHECK((read_as<decltype(sample)>(whole(body)) == sample));
    // Past max_borrowed arrays, the rest are copied.
    std::vector<std::vector<float>> many(lp::detail::cbor::gathered::max_borrowed + 6,
                                         std::vector<float>(20'000, 1.5f));
    body.clear();
    lp::detail::cbor::write(body, many);
    CHECK(body.pieces().size() == 2 * lp::detail::cbor::gathered::max_borrowed + 1);
    CHECK(whole(body) == written(many));
  }

  TEST_CASE(
      "a parameter taken by value is moved in, and the result sent from where it is") {
    // docs/concepts.md: the one copy of a 4 MB echo is the decoding's.
    lp::detail::typed_node<w::Keeper> node(std::make_unique<w::Keeper>());
    std::vector<float> values(100'000, 1.5f);  // over the size a reply refers to
    std::string body;
    lp::detail::cbor::head(body, 4, 1);
    lp::detail::cbor::write(body, values);
    lp::detail::written_reply out;
    REQUIRE(lp::detail::dispatch(node, "keeper", "keep", protocol::format::cbor,
                                 protocol::format::cbor, body, out) == 200);
    auto pieces = out.body.pieces();
    REQUIRE(pieces.size() == 3);  // the heads, the values, nothing after them
    CHECK(pieces[1].data() == reinterpret_cast<const char*>(w::Keeper::kept_at));
    CHECK(pieces[1].size() == values.size() * sizeof(float));
    CHECK(std::memcmp(pieces[1].data(), values.data(), pieces[1].size()) == 0);
  }

  TEST_CASE("tensors: shape, access, and what a bad one gets") {
    lp::tensor<float> m({2, 3});
    m(1, 2) = 5;
    CHECK(m[5] == 5);
    CHECK(m.rank() == 2);
    CHECK(m.size() == 6);
    CHECK_THROWS_AS(lp::tensor<float>({2, 2}, {1, 2, 3}), lp::usage_error);
    auto bad = lp::json::parse(R"({"shape": [2, 2], "data": [1, 2, 3]})");
    CHECK_THROWS_WITH_AS(from_wire<lp::tensor<float>>(bad),
                         doctest::Contains("needs 4 values, got 3"), lp::decode_error);
    auto overflow = lp::json::parse(R"({"shape": [4294967296, 4294967296], "data": []})");
    CHECK_THROWS_AS(from_wire<lp::tensor<float>>(overflow), lp::decode_error);
    CHECK_THROWS_AS(from_wire<lp::tensor<float>>(lp::json::parse("[1]")),
                    lp::decode_error);
  }

  TEST_CASE(
      "over HTTP: curl's JSON gets arrays back; a bad tensor gets 400 naming the "
      "argument") {
    lp::program p("wire_http");
    auto floats = p.add_node<w::Floats>("floats");
    auto tensor = p.add_node<w::Tensor>("tensor");
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.client(floats).echo(std::vector<float>{1.5f, 2.5f}) ==
          std::vector<float>{1.5f, 2.5f});
    httplib::Client http(running.urls().at("floats"));
    http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    auto reply = http.Post("/lp/v1/call/echo", "[[1.5, 2.5]]", "application/json");
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body == R"({"result":[1.5,2.5]})");
    httplib::Client tensor_http(running.urls().at("tensor"));
    tensor_http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    auto bad = tensor_http.Post("/lp/v1/call/echo", R"([{"shape": [3], "data": [1]}])",
                                "application/json");
    REQUIRE(bad);
    CHECK(bad->status == 400);
    CHECK(bad->body.find("argument 1 of echo") != std::string::npos);
    CHECK(bad->body.find("needs 3 values, got 1") != std::string::npos);
    lp::tensor<float> image({3, 4, 5});
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(i) / 7;
    CHECK(running.client(tensor).echo(image) == image);
  }

  TEST_CASE("the new kinds over HTTP: a C++ caller's CBOR and curl's JSON") {
    lp::program p("kinds_http");
    auto mixer = p.add_node<w::Mixer>("mixer");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(mixer);
    CHECK(client.scale(std::array<float, 3>{1, 2, 3}, 2.0f) ==
          std::array<float, 3>{2, 4, 6});
    CHECK(client.tags(std::vector<std::string>{"b", "a", "b"}) ==
          std::set<std::string>{"a", "b"});
    CHECK(client.count(std::set<std::string>{"ab", "c"}) ==
          std::unordered_map<std::string, int>{{"ab", 2}, {"c", 1}});
    CHECK(client.next(w::Color::red) == w::Color::green);
    CHECK(client.wrap(lp::json::parse(R"([1, "x"])")) ==
          lp::json::parse(R"({"wrapped": [1, "x"]})"));
    w::Kinds k{{1, 2, 3}, {"t"}, {{"s", {0.5, 1}}}, w::Color::blue, nullptr};
    auto back = client.kinds(k);
    k.tags.insert("seen");
    CHECK((back == k));
    httplib::Client http(running.urls().at("mixer"));
    http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    auto call = [&](const std::string& method, const std::string& body) {
      auto reply = http.Post("/lp/v1/call/" + method, body, "application/json");
      REQUIRE(reply);
      return std::to_string(reply->status) + " " + reply->body;
    };
    CHECK(call("scale", "[[1, 2, 3], 2]") == R"(200 {"result":[2.0,4.0,6.0]})");
    CHECK(call("tags", R"([["b", "a", "b"]])") == R"(200 {"result":["a","b"]})");
    CHECK(call("next", "[0]") == R"(200 {"result":1})");
    CHECK(
        call(
            "kinds",
            R"([{"rgb": [1, 2, 3], "tags": [], "series": {"s": [1]}, "color": 200, "extra": {"k": null}}])") ==
        R"(200 {"result":{"color":200,"extra":{"k":null},"rgb":[1.0,2.0,3.0],"series":{"s":[1.0]},"tags":["seen"]}})");
    auto bad = call("scale", "[[1, 2], 2]");
    CHECK(bad.find("400 ") == 0);
    CHECK(bad.find("argument 1 of scale: expected an array of 3 items (std::array<float, "
                   "3>), got array [1,2]") != std::string::npos);
    CHECK(call("next", "[256]")
              .find("argument 1 of next: expected an integer in range (w::Color), got "
                    "number 256") != std::string::npos);
  }

  TEST_CASE("a result with large arrays reaches C++, curl and a direct caller whole") {
    constexpr int n =
        50'000;  // every array over the size a body refers to rather than copies
    auto expected = w::Maker{}.make(n);
    for (bool direct : {false, true}) {
      CAPTURE(direct);
      lp::program p("results");
      auto maker = p.add_node<w::Maker>("maker");
      lp::controller running(
          p, lp::test_options{},
          direct ? lp::transport_kind::direct : lp::transport_kind::http);
      auto client = running.client(maker);
      for (int round = 0; round < 3; ++round) CHECK((client.make(n) == expected));
      CHECK((client.async.make(n).get() == expected));
      httplib::Client http(running.urls().at("maker"));
      http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
      for (const char* accept : {"application/cbor", "application/json"}) {
        CAPTURE(accept);
        auto reply = http.Post("/lp/v1/call/make", {{"Accept", accept}}, "[50000]",
                               "application/json");
        REQUIRE(reply);
        CHECK(reply->status == 200);
        auto body = std::string(accept) == "application/cbor"
                        ? protocol::decode(reply->body, protocol::format::cbor)
                        : protocol::decode(reply->body, protocol::format::json);
        CHECK((from_wire<w::Batch>(body["result"]) == expected));
      }
    }
  }

  TEST_CASE("a 64 MB payload crosses and comes back equal") {
    lp::program p("big");
    auto floats = p.add_node<w::Floats>("floats");
    auto running = lp::launch<lp::test_multi_threading>(p);
    std::vector<float> big(16u << 20);  // 16 Mi floats: 64 MiB
    for (std::size_t i = 0; i < big.size(); ++i)
      big[i] = static_cast<float>(i % 65521) * 0.5f;
    auto echoed = running.client(floats).echo(big);
    REQUIRE(echoed.size() == big.size());
    CHECK(std::memcmp(echoed.data(), big.data(), big.size() * sizeof(float)) == 0);
  }

  TEST_CASE("64 threads x 32 futures on one node: every result exact") {
    lp::program p("futures64");
    auto pure = p.add_node<w::Pure>("pure");
    auto counter = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto twice = running.client(pure);
    auto count = running.client(counter);
    std::atomic<int> wrong{0}, right{0};
    std::mutex mutex;
    std::string first_error;
    std::vector<std::thread> threads;
    for (int thread = 0; thread < 64; ++thread)
      threads.emplace_back([&, thread] {
        try {
          std::vector<std::future<long>> doubled, added;
          for (long i = 0; i < 32; ++i) {
            doubled.push_back(twice.async.twice(thread * 1000 + i));
            added.push_back(count.async.add(1));
          }
          for (std::size_t i = 0; i < 32; ++i) {
            (doubled[i].get() == 2 * (thread * 1000 + static_cast<long>(i)) ? right
                                                                            : wrong)++;
            added[i].get();
          }
        } catch (const std::exception& e) {
          ++wrong;
          std::lock_guard lock(mutex);
          if (first_error.empty()) first_error = e.what();
        }
      });
    for (auto& thread : threads) thread.join();
    INFO(first_error);
    CHECK(wrong == 0);
    CHECK(right == 64 * 32);
    CHECK(count.get() == 64 * 32);  // each add counted once
  }
}

// HTTP/1.1 framing: what a request's head must be to be served, and the
// status and message of each way it can be wrong.
TEST_SUITE("wire") {
  namespace http1 = lp::detail::http1;

  TEST_CASE("http1: a request head's method, target, body framing and connection") {
    http1::request_head head;
    auto error = http1::parse_request_head(
        "POST /lp/v1/call/add?x=1 HTTP/1.1\r\nHost: n\r\ncontent-length:  3 \r\n"
        "Connection: TE, close\r\nX-Empty:\r\n",
        head);
    REQUIRE_FALSE(error);
    CHECK(head.method == "POST");
    CHECK(head.path() == "/lp/v1/call/add");
    CHECK(head.query() == "x=1");
    CHECK(head.length == std::optional<std::size_t>(3));
    CHECK_FALSE(head.chunked);
    CHECK_FALSE(head.keep_alive);
    CHECK(head.field_value("CONTENT-LENGTH") == "3");
    CHECK(head.field_value("x-empty") == "");
    CHECK(head.field_value("Missing") == "");
    CHECK(head.fields.size() == 4);

    // Parsed again into the same head: nothing of the first is left.
    REQUIRE_FALSE(http1::parse_request_head(
        "GET http://node:80/lp/v1/health HTTP/1.0\r\nConnection: keep-alive\r\n", head));
    CHECK(head.path() == "/lp/v1/health");
    CHECK(head.query() == "");
    CHECK(head.http10);
    CHECK(head.keep_alive);
    CHECK_FALSE(head.length);
    CHECK(head.fields.size() == 1);

    REQUIRE_FALSE(http1::parse_request_head(
        "POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-continue\r\n",
        head));
    CHECK(head.chunked);
    CHECK(head.expect_continue);
    CHECK(head.keep_alive);
    REQUIRE_FALSE(http1::parse_request_head("GET / HTTP/1.0\r\n", head));
    CHECK_FALSE(head.keep_alive);
  }

  TEST_CASE("http1: a head that cannot be served says why, with its status") {
    struct bad {
      std::string_view text;
      int status;
      std::string_view says;
    };
    const bad heads[] = {
        {"GET /\r\n", 400, "request line"},
        {"GET  / HTTP/1.1\r\n", 400, "not a path"},
        {"GET * HTTP/1.1\r\n", 400, "not a path"},
        {"G(T / HTTP/1.1\r\n", 400, "not a token"},
        {"GET / HTTP/2.0\r\n", 505, "HTTP/1.1"},
        {"GET / FTP/1.1\r\n", 400, "HTTP/1.1"},
        {"GET / HTTP/1.1\r\nNo colon\r\n", 400, "malformed header line"},
        {"GET / HTTP/1.1\r\nName : v\r\n", 400, "malformed header line"},
        {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n", 400, "malformed header line"},
        {"GET / HTTP/1.1\r\nA: b\nB: c\r\n", 400, "malformed header line"},
        {"POST / HTTP/1.1\r\nContent-Length: -1\r\n", 400, "Content-Length"},
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n", 400,
         "Content-Length"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n", 501,
         "Transfer-Encoding"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n", 400,
         "both"},
        {"POST / HTTP/1.1\r\nExpect: 200-ok\r\n", 417, "100-continue"},
    };
    http1::request_head head;
    for (const auto& b : heads) {
      CAPTURE(b.text);
      auto error = http1::parse_request_head(b.text, head);
      REQUIRE(error);
      CHECK(error->status == b.status);
      CHECK(error->message.find(b.says) != std::string::npos);
    }
    // A length past size_t is larger than any limit, which refuses it (413).
    REQUIRE_FALSE(http1::parse_request_head(
        "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n", head));
    CHECK(head.length ==
          std::optional<std::size_t>(std::numeric_limits<std::size_t>::max()));
    // Equal duplicates are one length.
    CHECK_FALSE(http1::parse_request_head(
        "POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n", head));
    // What a message quotes is printable and short, whatever was sent.
    auto error =
        http1::parse_request_head(std::string(300, '\x01') + " / HTTP/1.1\r\n", head);
    REQUIRE(error);
    CHECK(error->message.size() < 200);
    CHECK(error->message.find('\x01') == std::string::npos);
  }

  TEST_CASE("http1: lengths, chunk sizes and token lists") {
    CHECK(http1::decimal("0") == std::optional<std::size_t>(0));
    CHECK(http1::decimal("18446744073709551615") ==
          std::optional<std::size_t>(std::numeric_limits<std::size_t>::max()));
    CHECK_FALSE(http1::decimal("18446744073709551616"));
    CHECK_FALSE(http1::decimal(""));
    CHECK_FALSE(http1::decimal("+1"));
    CHECK_FALSE(http1::decimal("1 "));
    CHECK(http1::chunk_size("1A3f") == std::optional<std::size_t>(0x1a3f));
    CHECK(http1::chunk_size("10 ;name=value") == std::optional<std::size_t>(16));
    CHECK(http1::chunk_size("0") == std::optional<std::size_t>(0));
    CHECK_FALSE(http1::chunk_size(""));
    CHECK_FALSE(http1::chunk_size("x"));
    CHECK_FALSE(http1::chunk_size("10 20"));
    CHECK_FALSE(http1::chunk_size("1ffffffffffffffff"));
    CHECK(http1::lists("TE, Close", "close"));
    CHECK(http1::lists("keep-alive", "keep-alive"));
    CHECK_FALSE(http1::lists("closed", "close"));
    CHECK_FALSE(http1::lists("", "close"));
  }
}
