// expect: LP_SERVICE(Plotter, move): a parameter or the return type of Plotter::move has no wire form
// Point has no to_json/from_json, so it cannot be a parameter of a remote method.
#include <launchpad/launchpad.hpp>

struct Point {
  int x = 0;
  int y = 0;
};

struct Plotter {
  void move(Point to) { at = to; }
  Point at;
};
LP_SERVICE(Plotter, move);
