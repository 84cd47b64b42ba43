// expect: LP_SERVICE(T, m): a parameter or the return type of T::m crosses
// expect: method<&Painter::paint>::uses<Pixel>::whose_codec_is_included
// expect: add #include <launchpad/json.hpp>
// A type with its own to_json/from_json crosses the wire through nlohmann,
// whose header launchpad.hpp leaves out: including nlohmann's header alone
// is not enough, <launchpad/json.hpp> brings the codec. The one message
// comes from LP_SERVICE; add_node and launch add none of their own.
#include <launchpad/launchpad.hpp>
#include <nlohmann/json.hpp>
#include <vector>

struct Pixel {
  int r = 0;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Pixel, r)
};

struct Painter {
  std::vector<Pixel> paint(int n) {
    return std::vector<Pixel>(static_cast<std::size_t>(n));
  }
};
LP_SERVICE(Painter, paint);

int main(int argc, char** argv) {
  lp::program p("paint");
  p.add_node<Painter>("painter");
  return lp::launch(p, argc, argv);
}
