// expect: LP_SERVICE(T): T has only half of a checkpoint
// expect: checkpoint_of<Tally>::has_both_lp_save_and_lp_restore
// Tally saves its state but cannot restore it: a restarted node could not
// take its checkpoint back.
#include <launchpad/launchpad.hpp>

struct Tally {
  long add(long x) { return total += x; }
  long lp_save() const { return total; }
  long total = 0;
};
LP_SERVICE(Tally, add);
