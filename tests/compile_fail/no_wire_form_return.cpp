// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Plotter::where>::uses<Point>::which_has_a_wire_form
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
