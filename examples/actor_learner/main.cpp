#include <cstdio>
#include <stdexcept>

#include "actor_learner.hpp"

int main(int argc, char** argv) {
  lp::program p("actor_learner");
  // report() runs on the learner's node: under local_mp, in its process, so
  // what it prints appears behind the label [learner].
  actor_learner::make_program(p, 3, {}, [](const actor_learner::parameters& q) {
    auto score = actor_learner::evaluate(q);
    std::printf("average return: learned policy %.2f, random policy %.2f\n",
                score.learned, score.random);
    std::fflush(stdout);
    // A check no real program needs: `meson test` runs this binary, and it
    // should fail if nothing was learned (an exception here fails the node).
    if (score.learned < score.random + 1.0)
      throw std::runtime_error("the learned policy is no better than a random one");
  });
  return lp::launch(p, argc, argv);
}
