// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Switch::set>::uses<Flags>::which_has_a_wire_form
// expect: the compiler names a field by its address, and a field of this struct has none: a bit-field
// Flags packs its fields into bits: a bit-field has no address, by which the
// compiler would name it.
#include <launchpad/launchpad.hpp>

struct Flags {
  unsigned mode : 3;
  bool on : 1;
};

struct Switch {
  void set(Flags flags) { mode = flags.mode; }
  unsigned mode = 0;
};
LP_SERVICE(Switch, set);
