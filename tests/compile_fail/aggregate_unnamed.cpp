// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Plotter::move>::uses<Point>::which_has_a_wire_form
// expect: this compiler does not give the names of a struct's fields
// expect: declare the struct with BOOST_HANA_DEFINE_STRUCT
// A compiler whose spelling of a field the library does not know, as one
// whose spelling changed would be: here g++ or clang++ with the end of its
// spelling misstated (detail/wire/field_name.hpp).
#define LP_DETAIL_FIELD_SPELLING_END "?]"
#include <launchpad/launchpad.hpp>

struct Point {
  double x = 0, y = 0;
};

struct Plotter {
  void move(Point to) { at = to; }
  Point at;
};
LP_SERVICE(Plotter, move);
