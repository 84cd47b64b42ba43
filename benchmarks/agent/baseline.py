"""The agent of examples/agent as one Python process: the script a user
would write first. A Python CartPole-v1 (Gym's equations, as
examples/agent/cartpole.hpp), a list of environments stepped one after
another, the policy run with PyTorch on all their observations at each step,
and every `unroll` steps one update of the same IMPALA learner
(examples/agent/impala.py: the same network, V-trace, Adam and settings).
Being one process, it acts with the latest parameters: V-trace's
corrections are then all 1.

    /usr/bin/python3 benchmarks/agent/baseline.py [--envs 32] [--unroll 16] [--seed 0]
        [--target 475] [--max_seconds 600] [--max_steps N] [--json]

It stops once the last 100 episodes average `target` (0: never), or at
max_steps or max_seconds, and prints the steps, the time and the steps/s
(with --json, one JSON object).
"""

import argparse
import collections
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "agent"))
import impala  # noqa: E402


class CartPole:
    """CartPole-v1: Barto, Sutton and Anderson's cart-pole, as Gym has it."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    total_mass = masspole + masscart
    polemass_length = masspole * length
    theta_threshold = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    max_steps = 500

    def __init__(self, rng):
        self.rng = rng

    def reset(self):
        self.state = [self.rng.uniform(-0.05, 0.05) for _ in range(4)]
        self.steps = 0
        return list(self.state)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + self.polemass_length * theta_dot ** 2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = [x, x_dot, theta, theta_dot]
        self.steps += 1
        terminated = (x < -self.x_threshold or x > self.x_threshold
                      or theta < -self.theta_threshold or theta > self.theta_threshold)
        truncated = not terminated and self.steps >= self.max_steps
        return list(self.state), 1.0, terminated, truncated


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=32)
    parser.add_argument("--unroll", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=475.0)
    parser.add_argument("--max_seconds", type=float, default=600.0)
    parser.add_argument("--max_steps", type=int, default=5_000_000)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    learner = impala.Learner(impala.Config(learning_rate=args.learning_rate, hidden=args.hidden),
                             seed=args.seed)
    net = learner.network
    envs = [CartPole(rng) for _ in range(args.envs)]
    obs = [env.reset() for env in envs]
    returns = [0.0] * args.envs
    recent = collections.deque(maxlen=100)
    steps = episodes = 0
    T, E = args.unroll, args.envs
    start, cpu_start = time.monotonic(), time.process_time()
    why = None
    while why is None:
        observations = np.zeros((T + 1, E, 4), np.float32)
        actions = np.zeros((T, E), np.int64)
        logps = np.zeros((T, E), np.float32)
        rewards = np.zeros((T, E), np.float32)
        terminated = np.zeros((T, E), bool)
        truncated = np.zeros((T, E), bool)
        finals = np.zeros((T, E, 4), np.float32)
        for t in range(T):
            observations[t] = obs
            with torch.no_grad():
                logits, _ = net(torch.as_tensor(observations[t]))
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
                logps[t] = dist.log_prob(action).numpy()
            actions[t] = action.numpy()
            for e, env in enumerate(envs):
                o, r, term, trunc = env.step(int(actions[t, e]))
                rewards[t, e] = r
                returns[e] += r
                if term or trunc:
                    terminated[t, e], truncated[t, e] = term, trunc
                    finals[t, e] = o
                    recent.append(returns[e])
                    returns[e] = 0.0
                    episodes += 1
                    o = env.reset()
                obs[e] = o
        observations[T] = obs
        learner.update(observations, actions, logps, rewards, terminated, truncated, finals)
        steps += T * E
        seconds = time.monotonic() - start
        average = sum(recent) / len(recent) if recent else 0.0
        if args.target > 0 and len(recent) == 100 and average >= args.target:
            why = "reached"
        elif steps >= args.max_steps:
            why = "max_steps"
        elif seconds >= args.max_seconds:
            why = "max_seconds"
    result = {"why": why, "steps": steps, "episodes": episodes, "updates": learner.updates,
              "seconds": seconds, "steps_per_second": steps / seconds, "average_return": average,
              "cpu_us_per_step": 1e6 * (time.process_time() - cpu_start) / steps}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"baseline: {why}: average return {average:.1f} after {steps} env steps, "
              f"{episodes} episodes, {learner.updates} updates in {seconds:.1f} s "
              f"({steps / seconds:.0f} env steps/s)")


if __name__ == "__main__":
    main()
