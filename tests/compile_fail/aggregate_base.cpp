// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Plotter::move>::uses<Point3>::which_has_a_wire_form
// expect: the compiler names the fields of a plain struct only when they are all its own
// expect: declare the struct with BOOST_HANA_DEFINE_STRUCT
// Point3 is a plain struct, but with a base class: the compiler gives the names of
// its own fields only, so it cannot cross the wire without a declaration.
#include <launchpad/launchpad.hpp>

struct Point2 {
  double x = 0, y = 0;
};
struct Point3 : Point2 {
  double z = 0;
};

struct Plotter {
  void move(Point3 to) { at = to; }
  Point3 at;
};
LP_SERVICE(Plotter, move);
