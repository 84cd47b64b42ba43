// expect: LP_SERVICE(T): the State that T::lp_save() returns has no wire form
// expect: checkpoint_of<Tally>::state<Totals>::has_a_wire_form
// Totals keeps its sum private: it has no wire form, so a checkpoint cannot hold it.
#include <launchpad/launchpad.hpp>

class Totals {
 public:
  long add(long x) { return sum_ += x; }

 private:
  long sum_ = 0;
};

struct Tally {
  long add(long x) { return totals.add(x); }
  Totals lp_save() const { return totals; }
  void lp_restore(Totals saved) { totals = saved; }
  Totals totals;
};
LP_SERVICE(Tally, add);
