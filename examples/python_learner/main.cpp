// C++ actors and a Python learner in one program (docs/python_nodes.md).
//
// Each actor plays a ten-armed bandit: it draws arms from the softmax of the
// learner's preferences, and sends what it drew and won to the learner,
// which is a Python class (learner.py) that updates the preferences with
// numpy (a policy gradient). The program stops once an actor's recent
// average reward is close to the best arm's.
//
//   cd examples/python_learner && PYTHONPATH=../../python <build>/examples/python_learner
//
// The learner's module comes from the working directory or PYTHONPATH;
// --lp_python=PATH names another interpreter than python3.

#include <cmath>
#include <cstdio>
#include <launchpad/launchpad.hpp>
#include <random>
#include <vector>

namespace bandit {

inline constexpr int arms = 10;

// Served by learner.py's class Learner; C++ declares what it serves.
struct Learner {
  // Learns from the arms an actor drew and the rewards it got; returns the
  // learner's step.
  long learn(std::vector<int> drawn, std::vector<float> rewards);
  // The preference of each arm.
  std::vector<float> preferences();
};
LP_SERVICE(Learner, learn, preferences);
LP_PYTHON(Learner, "learner", "Learner");

// The mean reward of arm i: the last arm is the best.
inline double mean_reward(int arm) {
  return 0.1 * arm;
}

struct Actor {
  lp::client<Learner> learner;
  unsigned seed;

  void run() {
    std::mt19937 random(seed);
    std::normal_distribution<double> noise(0.0, 0.1);
    double recent = 0;
    for (int round = 1; round <= 2000 && !lp::stop_requested(); ++round) {
      auto preferences = learner.preferences();
      std::vector<double> weights;
      for (float p : preferences) weights.push_back(std::exp(p));
      std::discrete_distribution<int> draw(weights.begin(), weights.end());
      std::vector<int> drawn;
      std::vector<float> rewards;
      for (int i = 0; i < 32; ++i) {
        drawn.push_back(draw(random));
        rewards.push_back(static_cast<float>(mean_reward(drawn.back()) + noise(random)));
      }
      double mean = 0;
      for (float r : rewards) mean += r / rewards.size();
      recent = round == 1 ? mean : 0.9 * recent + 0.1 * mean;
      long step = learner.learn(drawn, rewards);
      if (recent > 0.95 * mean_reward(arms - 1) && round > 20) {
        std::printf("actor %u: average reward %.3f after %d rounds (learner step %ld)\n",
                    seed, recent, round, step);
        lp::stop();
        return;
      }
    }
    // Another actor may have stopped the program first.
    if (!lp::stop_requested())
      throw std::runtime_error("the actors did not learn to pick the best arm");
  }
};
LP_SERVICE(Actor);

}  // namespace bandit

int main(int argc, char** argv) {
  lp::program p("python_learner");
  auto learner = p.add_node<bandit::Learner>("learner", bandit::arms, 0.1);
  auto actors = p.group("actors");
  for (unsigned i = 0; i < 2; ++i) actors.add_node<bandit::Actor>(learner, i + 1);
  return lp::launch(p, argc, argv);
}
