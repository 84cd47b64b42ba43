// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Plotter::where>::uses<Point>::which_has_a_wire_form
// Point keeps its fields private and has no to_json/from_json, so a remote method
// cannot return it.
#include <launchpad/launchpad.hpp>

class Point {
 public:
  Point() = default;

 private:
  int x_ = 0;
  int y_ = 0;
};

struct Plotter {
  Point where() const { return at; }
  Point at;
};
LP_SERVICE(Plotter, where);
