// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Plotter::move>::uses<Point>::which_has_a_wire_form
// expect: this type has no wire form: make it a plain struct (public fields, no constructors
// Point keeps its fields private and has no to_json/from_json, so it cannot be a
// parameter of a remote method. The one message comes from LP_SERVICE; add_node and
// launch add none.
#include <launchpad/launchpad.hpp>

class Point {
 public:
  Point() = default;
  Point(int x, int y) : x_(x), y_(y) {}

 private:
  int x_ = 0;
  int y_ = 0;
};

struct Plotter {
  void move(Point to) { at = to; }
  Point at;
};
LP_SERVICE(Plotter, move);

int main(int argc, char** argv) {
  lp::program p("plot");
  p.add_node<Plotter>("plotter");
  return lp::launch(p, argc, argv);
}
