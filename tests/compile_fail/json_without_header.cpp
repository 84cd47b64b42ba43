// expect: add #include <launchpad/json.hpp>
// A type with its own to_json/from_json crosses the wire through nlohmann,
// whose header launchpad.hpp leaves out: including nlohmann's header alone
// is not enough, <launchpad/json.hpp> brings the codec.
#include <launchpad/launchpad.hpp>
#include <nlohmann/json.hpp>

struct Pixel {
  int r = 0;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Pixel, r)
};

struct Painter {
  Pixel get() const { return {}; }
};
LP_SERVICE(Painter, get);

int main(int argc, char** argv) {
  lp::program p("json_without_header");
  p.add_node<Painter>("painter");
  return lp::launch(p, argc, argv);
}
