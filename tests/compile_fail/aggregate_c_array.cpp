// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Camera::show>::uses<Frame>::which_has_a_wire_form
// expect: the compiler cannot count the fields of this struct: one is a C array (use std::array)
// Frame holds a C array, whose elements aggregate initialization counts as fields:
// its fields cannot be counted, so they cannot be named.
#include <launchpad/launchpad.hpp>

struct Frame {
  float pixels[16];
  int id = 0;
};

struct Camera {
  void show(Frame frame) { last = frame.id; }
  int last = 0;
};
LP_SERVICE(Camera, show);
