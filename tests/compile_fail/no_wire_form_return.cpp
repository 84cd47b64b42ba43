// expect: LP_SERVICE(Plotter, where): a parameter or the return type of Plotter::where has no wire form
// Point has no to_json/from_json, so a remote method cannot return it.
#include <launchpad/launchpad.hpp>

struct Point {
  int x = 0;
  int y = 0;
};

struct Plotter {
  Point where() const { return at; }
  Point at;
};
LP_SERVICE(Plotter, where);
