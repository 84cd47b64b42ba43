// Plain aggregates as wire types, with no macro: the compiler gives their
// fields' names (detail/wire/aggregate.hpp, field_name.hpp), and they cross
// as BOOST_HANA_DEFINE_STRUCT structs do: round trips in JSON and CBOR,
// schemas, calls over HTTP, node arguments, checkpoints; and the kinds of
// struct the compiler cannot name, refused (tests/compile_fail/aggregate_*).
#include <httplib.h>

#include <array>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/wire/aggregate.hpp>
#include <launchpad/detail/wire/schema.hpp>
#include <memory>
#include <optional>

#include "services.hpp"
#include "wire_checks.hpp"

namespace agg {
struct Point {
  double x = 0;
  double y = 0;
  bool operator==(const Point&) const = default;
};

enum class Shade : std::uint8_t { light, dark = 7 };

// Every kind inside one plain struct, a Hana struct too.
struct Scene {
  std::string name;
  std::vector<Point> outline;
  std::optional<Point> focus;
  std::map<std::string, std::vector<float>> layers;
  lp::tensor<float> image = lp::tensor<float>({0});
  std::array<std::int16_t, 2> size{};
  Shade shade = Shade::light;
  std::tuple<int, std::string> tag;
  t::Point hana;
  bool operator==(const Scene&) const = default;
};

// A plain struct holding itself, through a std::vector.
struct Tree {
  int value = 0;
  std::vector<Tree> children;
  bool operator==(const Tree&) const = default;
};

struct Nothing {
  bool operator==(const Nothing&) const = default;
};

// A plain struct in a Hana struct, and in a type nlohmann converts.
struct Framed {
  BOOST_HANA_DEFINE_STRUCT(Framed, (Point, corner), (std::string, label));
  bool operator==(const Framed&) const = default;
};
struct Labeled {
  Point at;
  std::string text;
  bool operator==(const Labeled&) const = default;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Labeled, at, text)
};

// The most fields the compiler names, and one more.
struct Wide64 {
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
      f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33, f34, f35,
      f36, f37, f38, f39, f40, f41, f42, f43, f44, f45, f46, f47, f48, f49, f50, f51, f52,
      f53, f54, f55, f56, f57, f58, f59, f60, f61, f62, f63;
};
struct Wide65 {
  Wide64 first;  // (64 fields of its own, then one more)
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
      f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33, f34, f35,
      f36, f37, f38, f39, f40, f41, f42, f43, f44, f45, f46, f47, f48, f49, f50, f51, f52,
      f53, f54, f55, f56, f57, f58, f59, f60, f61, f62, f63;
};

// What the compiler cannot name, each for its reason.
struct Based : Point {
  double z = 0;
};
struct EmptyBased : Nothing {
  double z = 0;
};
struct WithArray {
  float values[3];
};
struct NoDefault {
  explicit NoDefault(int) {}
};
struct WithoutDefault {
  int a = 0;
  NoDefault b = NoDefault(1);
};
struct WithBits {
  unsigned mode : 3;
  bool on : 1;
};
struct WithWholeBits {  // as wide as its type: no bits saved, still no address
  int whole : 32;
};
inline int referent = 0;
struct WithReference {
  int a = 0;
  const int& b = referent;
};
struct WithLvalueReference {
  int& b = referent;
};
class Private {
 public:
  int get() const { return x_; }

 private:
  int x_ = 0;
};

// Services that take and return them.
struct Painter {
  Scene paint(Scene scene, Point by) {
    for (auto& p : scene.outline) p = {p.x + by.x, p.y + by.y};
    return scene;
  }
  std::vector<Point> corners(const std::map<std::string, Point>& named) const {
    std::vector<Point> out;
    for (const auto& [name, p] : named) out.push_back(p);
    return out;
  }
  Tree grow(Tree tree) {
    tree.children.push_back(Tree{tree.value + 1, {}});
    return tree;
  }
};

// A node built from a plain struct and a string literal, whose state is a
// plain struct (its checkpoint).
struct Canvas {
  Point origin;
  std::string title;
  Point where() const { return origin; }
  std::string name() const { return title; }
  Point lp_save() const { return origin; }
  void lp_restore(Point saved) { origin = saved; }
};
}  // namespace agg

LP_SERVICE(agg::Painter, paint, corners, grow);
LP_SERVICE(agg::Canvas, where, name);

namespace {
using lp::detail::from_wire;
using lp::detail::to_wire;
using wire_checks::check_both;
using wire_checks::misfit;
using wire_checks::read_as;
using wire_checks::without_spellings;
using wire_checks::written;
namespace protocol = lp::detail::protocol;

template <class T>
std::string json_text(const T& value) {
  return protocol::encode(to_wire(value), protocol::format::json);
}

agg::Scene a_scene() {
  agg::Scene scene;
  scene.name = "square";
  scene.outline = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  scene.focus = agg::Point{0.5, 0.5};
  scene.layers = {{"alpha", {0.25f, 1}}, {"empty", {}}};
  scene.image = lp::tensor<float>({2, 2}, {1, 2, 3, 4});
  scene.size = {640, -480};
  scene.shade = agg::Shade::dark;
  scene.tag = {7, "seven"};
  scene.hana = t::Point{-1, 2.5};
  return scene;
}

template <class T>
lp::json schema_of() {
  return lp::detail::schema_json(lp::detail::schema_of<T>::value);
}
}  // namespace

TEST_SUITE("aggregates") {
  TEST_CASE("a field's name from each compiler's spelling, and from this compiler's") {
    using lp::detail::field_name_in;
    // g++ 12 and g++ 14 (Debian 12 and 13).
    CHECK(field_name_in(
              "consteval const char* lp::detail::spelled_field() [with auto Field = "
              "field_pointer<std::__cxx11::basic_string<char> >{(& "
              "unbuilt_object<ns::Point>.object_of<ns::Point>::value.ns::Point::y)}]",
              ")}]") == "y");
    // clang++ 14 (Debian 12).
    CHECK(field_name_in("const char *lp::detail::spelled_field() [Field = "
                        "{&unbuilt_object.value.y}]",
                        "}]") == "y");
    // clang++ 19 (Debian 13).
    CHECK(field_name_in("const char *lp::detail::spelled_field() [Field = field_pointer<"
                        "basic_string<char, char_traits<char>, "
                        "allocator<char>>>{&unbuilt_object.value.long_name_2}]",
                        "}]") == "long_name_2");
    // What is not such a spelling gives no name: another end, no end (a
    // compiler not known), no identifier, one that starts with a digit, none
    // after a '.' or "::".
    CHECK(field_name_in("[Field = {&unbuilt_object.value.y}]", ")}]").empty());
    CHECK(field_name_in("[Field = {&unbuilt_object.value.y}]", "").empty());
    CHECK(field_name_in("[Field = {&unbuilt_object.value.}]", "}]").empty());
    CHECK(field_name_in("[Field = {&unbuilt_object.value.2y}]", "}]").empty());
    CHECK(field_name_in("[Field = {&unbuilt_object + 8}]", "}]").empty());
    CHECK(field_name_in("}]", "}]").empty());
    // This compiler's own spelling, of the end this header expects of it.
    CHECK(field_name_in(
              lp::detail::spelled_field<lp::detail::field_address<agg::Scene, 9, 4>()>(),
              lp::detail::field_spelling_end) == "image");
    CHECK(std::string_view(lp::detail::aggregate_fields<agg::Wide64>::names[63]) ==
          "f63");
  }

  TEST_CASE("the kinds: what the compiler names crosses, each other struct is refused") {
    using lp::wire_type;
    using lp::detail::wire_kind;
    using lp::detail::wire_kind_of;
    static_assert(wire_kind_of<agg::Point> == wire_kind::record);
    static_assert(wire_kind_of<agg::Scene> == wire_kind::record);
    static_assert(wire_kind_of<agg::Nothing> == wire_kind::record);
    static_assert(wire_kind_of<agg::Wide64> == wire_kind::record);
    static_assert(wire_type<agg::Tree>);  // recursive, through a std::vector
    static_assert(wire_type<std::vector<std::map<std::string, agg::Point>>>);
    static_assert(wire_kind_of<agg::Labeled> == wire_kind::nlohmann);  // its own to_json
    static_assert(wire_kind_of<agg::Based> == wire_kind::refused_base);
    static_assert(wire_kind_of<agg::EmptyBased> == wire_kind::refused_base);
    static_assert(wire_kind_of<agg::WithArray> == wire_kind::refused_uncounted);
    static_assert(wire_kind_of<agg::WithoutDefault> == wire_kind::refused_uncounted);
    static_assert(wire_kind_of<agg::WithLvalueReference> == wire_kind::refused_uncounted);
    static_assert(wire_kind_of<agg::Wide65> == wire_kind::refused_too_many);
    static_assert(wire_kind_of<agg::WithBits> == wire_kind::refused_unaddressed);
    static_assert(wire_kind_of<agg::WithWholeBits> == wire_kind::refused_unaddressed);
    static_assert(wire_kind_of<agg::WithReference> == wire_kind::refused_unaddressed);
    static_assert(wire_kind_of<agg::Private> == wire_kind::none);
    static_assert(!wire_type<std::vector<agg::WithBits>>);  // wherever it sits
    static_assert(
        std::is_same_v<lp::detail::wire_offender<std::optional<agg::Based>>, agg::Based>);
    // A struct local to a function is named as well.
    struct Local {
      int count = 0;
      std::string label;
      bool operator==(const Local&) const = default;
    };
    static_assert(wire_kind_of<Local> == wire_kind::record);
    check_both(Local{3, "three"});
    CHECK(json_text(Local{3, "three"}) == R"({"count":3,"label":"three"})");
  }

  TEST_CASE("plain structs round-trip through JSON and CBOR, nested and in containers") {
    check_both(agg::Point{1.5, -2});
    check_both(a_scene());
    check_both(agg::Scene{});
    check_both(agg::Tree{1, {agg::Tree{2, {}}, agg::Tree{3, {agg::Tree{4, {}}}}}});
    check_both(agg::Nothing{});
    check_both(std::vector<agg::Point>{{1, 2}, {3, 4}});
    check_both(std::map<std::string, agg::Point>{{"a", {1, 2}}});
    check_both(std::optional<agg::Point>());
    check_both(std::pair<agg::Point, std::set<int>>({5, 6}, {1, 2}));
    check_both(agg::Framed{{1, 2}, "framed"});
    agg::Wide64 wide{};
    wide.f0 = 1;
    wide.f63 = 63;
    auto back = read_as<agg::Wide64>(written(wide));
    CHECK(back.f0 == 1);
    CHECK(back.f63 == 63);
  }

  TEST_CASE("on the wire a plain struct is what a Hana struct of the same fields is") {
    // t::Point is BOOST_HANA_DEFINE_STRUCT(Point, (double, x), (double, y)).
    CHECK(written(agg::Point{1.5, -2}) == written(t::Point{1.5, -2}));
    CHECK(json_text(agg::Point{1.5, -2}) == R"({"x":1.5,"y":-2.0})");
    CHECK(read_as<agg::Point>(written(t::Point{3, 4})) == agg::Point{3, 4});
    CHECK(json_text(agg::Tree{1, {agg::Tree{2, {}}}}) ==
          R"({"children":[{"children":[],"value":2}],"value":1})");
    CHECK(json_text(agg::Nothing{}) == "{}");
    // Read as strictly: every field, each of its type; other keys skipped.
    CHECK(misfit<agg::Point>(R"({"x": 1, "y": 2, "z": 3})") == "(no error)");
    CHECK(misfit<agg::Point>(R"({"y": 2})") ==
          R"(expected an object with member 'x' (agg::Point), got object {"y":2})");
    CHECK(misfit<agg::Point>(R"({"x": "1", "y": 2})") ==
          R"(expected a number (double), got string "1")");
    CHECK(misfit<agg::Scene>(R"([1, 2])").find("expected an object (agg::Scene)") == 0);
    // As lp::json, both ways, and inside a type nlohmann converts.
    lp::json j = agg::Point{0.5, 1};
    CHECK(j.dump() == R"({"x":0.5,"y":1.0})");
    CHECK(j.get<agg::Point>() == agg::Point{0.5, 1});
    CHECK_THROWS_AS(lp::json::parse(R"({"x": true, "y": 1})").get<agg::Point>(),
                    lp::decode_error);
    lp::json labeled = agg::Labeled{{1, 2}, "here"};
    CHECK(labeled.dump() == R"({"at":{"x":1.0,"y":2.0},"text":"here"})");
    CHECK(labeled.get<agg::Labeled>() == agg::Labeled{{1, 2}, "here"});
    check_both(agg::Labeled{{1, 2}, "here"});
  }

  TEST_CASE("describe's schema of a plain struct is a Hana struct's, field by field") {
    CHECK(without_spellings(schema_of<agg::Point>()) ==
          without_spellings(schema_of<t::Point>()));
    CHECK(schema_of<agg::Point>()["type"] == "agg::Point");
    auto f64 = lp::json{{"kind", "floating"}, {"bits", 64}};
    auto point = lp::json{
        {"kind", "struct"},
        {"fields", {{{"name", "x"}, {"schema", f64}}, {{"name", "y"}, {"schema", f64}}}}};
    CHECK(without_spellings(schema_of<agg::Point>()) == point);
    auto scene = without_spellings(schema_of<agg::Scene>());
    REQUIRE(scene["fields"].size() == 9);
    std::vector<std::string> names;
    for (const auto& field : scene["fields"]) names.push_back(field["name"]);
    CHECK(names == std::vector<std::string>{"name", "outline", "focus", "layers", "image",
                                            "size", "shade", "tag", "hana"});
    CHECK(scene["fields"][1]["schema"] ==
          lp::json{{"kind", "sequence"}, {"element", point}});
    CHECK(scene["fields"][2]["schema"] ==
          lp::json{{"kind", "optional"}, {"value", point}});
    CHECK(scene["fields"][6]["schema"] ==
          lp::json{{"kind", "enumeration"}, {"bits", 8}, {"signed", false}});
    // A struct inside itself points back at its schema.
    auto tree = without_spellings(schema_of<agg::Tree>());
    CHECK(tree["fields"][1]["schema"]["element"] ==
          lp::json{{"kind", "struct"}, {"recursive", 1}});
  }

  TEST_CASE("over HTTP: parameters and results, a C++ caller's CBOR and curl's JSON") {
    lp::program p("aggregates_http");
    auto painter = p.add_node<agg::Painter>("painter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(painter);
    auto scene = a_scene();
    auto moved = client.paint(scene, agg::Point{10, 20});
    for (auto& point : scene.outline) point = {point.x + 10, point.y + 20};
    CHECK((moved == scene));
    CHECK(client.corners({{"b", {3, 4}}, {"a", {1, 2}}}) ==
          std::vector<agg::Point>{{1, 2}, {3, 4}});
    CHECK((client.grow(agg::Tree{1, {}}) == agg::Tree{1, {agg::Tree{2, {}}}}));
    httplib::Client http(running.urls().at("painter"));
    http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    auto call = [&](const std::string& method, const std::string& body) {
      auto reply = http.Post("/lp/v1/call/" + method, body, "application/json");
      REQUIRE(reply);
      return std::to_string(reply->status) + " " + reply->body;
    };
    CHECK(call("corners", R"([{"p": {"x": 1, "y": 2}}])") ==
          R"(200 {"result":[{"x":1.0,"y":2.0}]})");
    CHECK(call("grow", R"([{"value": 5, "children": []}])") ==
          R"(200 {"result":{"children":[{"children":[],"value":6}],"value":5}})");
    auto bad = call("corners", R"([{"p": {"x": 1}}])");
    CHECK(bad.find("400 ") == 0);
    CHECK(bad.find("argument 1 of corners: expected an object with member 'y' "
                   "(agg::Point)") != std::string::npos);
    auto describe = http.Get("/lp/v1/describe");
    REQUIRE(describe);
    auto methods = lp::json::parse(describe->body)["methods"];
    CHECK(without_spellings(methods[0]["params"][1]) ==
          without_spellings(schema_of<agg::Point>()));
    CHECK(methods[0]["params"][1]["type"] == "agg::Point");
  }

  TEST_CASE(
      "a node built from a plain struct and a string literal; its state a plain "
      "struct") {
    lp::program p("aggregates_node");
    char buffer[] = "from a buffer";
    auto literal = p.add_node<agg::Canvas>("literal", agg::Point{1, 2}, "a literal");
    auto from_buffer = p.add_node<agg::Canvas>("buffer", agg::Point{3, 4}, buffer);
    buffer[0] = 'X';  // the program kept its own copy of the text
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.client(literal).where() == agg::Point{1, 2});
    CHECK(running.client(literal).name() == "a literal");
    CHECK(running.client(from_buffer).name() == "from a buffer");
    CHECK(running.stop());
    // The checkpoint: what lp_save returns, in CBOR, and back through lp_restore.
    static_assert(lp::checkpointed<agg::Canvas>);
    lp::detail::typed_node<agg::Canvas> saving(
        std::make_unique<agg::Canvas>(agg::Canvas{{5, 6}, "saved"}));
    auto state = saving.save();
    CHECK(state == written(agg::Point{5, 6}));
    auto canvas = std::make_unique<agg::Canvas>();
    auto* restored = canvas.get();
    lp::detail::typed_node<agg::Canvas> restoring(std::move(canvas));
    restoring.restore(state);
    CHECK(restored->origin == agg::Point{5, 6});
    CHECK_THROWS_AS(restoring.restore(written(std::string("not a point"))),
                    lp::decode_error);
  }
}
