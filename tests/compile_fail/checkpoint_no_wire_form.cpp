// expect: LP_SERVICE(T): the State that T::lp_save() returns has no wire form
// expect: checkpoint_of<Tally>::state<Totals>::has_a_wire_form
// Totals has no wire form, so a checkpoint cannot hold it.
#include <launchpad/launchpad.hpp>

struct Totals {
  long sum = 0;
};

struct Tally {
  long add(long x) { return totals.sum += x; }
  Totals lp_save() const { return totals; }
  void lp_restore(Totals saved) { totals = saved; }
  Totals totals;
};
LP_SERVICE(Tally, add);
