#pragma once
// CartPole-v1 in plain C++, no Launchpad: the cart-pole of Barto, Sutton and
// Anderson (1983), "Neuronlike adaptive elements that can solve difficult
// learning control problems", with the constants, Euler integration,
// termination and time limit of Gym's CartPole-v1:
//
// - state (x, x', θ, θ'), each drawn from U(-0.05, 0.05) at a reset;
// - action 0 pushes the cart left, 1 right, with a force of 10 N;
// - reward 1 for every step, the last one included;
// - the episode terminates once |x| > 2.4 or |θ| > 12° (0.2094 rad), and is
//   truncated after 500 steps: returns run from 9 or so (falling at once)
//   to 500, and the task counts as solved at an average of 475 over 100
//   episodes.
#include <array>
#include <cmath>
#include <numbers>
#include <random>

namespace agent {

struct cartpole {
  static constexpr double gravity = 9.8, cart_mass = 1.0, pole_mass = 0.1,
                          total_mass = cart_mass + pole_mass,
                          half_length = 0.5,  // of the pole
      pole_mass_length = pole_mass * half_length, force = 10.0,
                          tau = 0.02,  // seconds between steps
      x_threshold = 2.4, theta_threshold = 12 * 2 * std::numbers::pi / 360;
  static constexpr int max_steps = 500;
  static constexpr int observation_size = 4, num_actions = 2;

  using observation = std::array<float, observation_size>;

  struct outcome {
    float reward;
    bool terminated;  // the pole fell or the cart left the track
    bool truncated;   // 500 steps without either
  };

  observation reset(std::mt19937& rng) {
    std::uniform_real_distribution<double> start(-0.05, 0.05);
    for (auto& s : state) s = start(rng);
    steps = 0;
    return observe();
  }

  outcome step(int action) {
    auto& [x, x_dot, theta, theta_dot] = state;
    double f = action == 1 ? force : -force;
    double cos_theta = std::cos(theta), sin_theta = std::sin(theta);
    double temp = (f + pole_mass_length * theta_dot * theta_dot * sin_theta) / total_mass;
    double theta_acc =
        (gravity * sin_theta - cos_theta * temp) /
        (half_length * (4.0 / 3.0 - pole_mass * cos_theta * cos_theta / total_mass));
    double x_acc = temp - pole_mass_length * theta_acc * cos_theta / total_mass;
    x += tau * x_dot;
    x_dot += tau * x_acc;
    theta += tau * theta_dot;
    theta_dot += tau * theta_acc;
    ++steps;
    bool terminated = x < -x_threshold || x > x_threshold || theta < -theta_threshold ||
                      theta > theta_threshold;
    return {1.0f, terminated, !terminated && steps >= max_steps};
  }

  observation observe() const {
    return {static_cast<float>(state[0]), static_cast<float>(state[1]),
            static_cast<float>(state[2]), static_cast<float>(state[3])};
  }

  std::array<double, 4> state{};
  int steps = 0;
};

}  // namespace agent
