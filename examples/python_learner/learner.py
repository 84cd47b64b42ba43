"""The learner of examples/python_learner: a Python node of a C++ program.

C++ declares its methods (main.cpp, struct Learner); their type hints here
must say the same types, which the launch checks before the program runs.
"""

import threading

import numpy as np

import launchpad_client as lp


class Learner:
    def __init__(self, arms: int, step_size: float):
        self.preferences_ = np.zeros(arms, dtype=np.float32)
        self.step_size = step_size
        self.baseline = 0.0
        self.steps = 0
        # Actors call at once: calls run on several threads.
        self.lock = threading.Lock()

    lp_concurrent_handlers = True

    def learn(self, drawn: list[lp.int32], rewards: list[lp.float32]) -> int:
        drawn = np.asarray(drawn, dtype=np.int64)
        rewards = np.asarray(rewards, dtype=np.float32)
        with self.lock:
            p = np.exp(self.preferences_ - self.preferences_.max())
            p /= p.sum()
            # The gradient of the expected reward (REINFORCE with a baseline).
            advantage = rewards - self.baseline
            gradient = -np.outer(advantage, p).sum(axis=0)
            np.add.at(gradient, drawn, advantage)
            self.preferences_ += self.step_size * gradient / len(drawn)
            self.baseline += 0.05 * (float(rewards.mean()) - self.baseline)
            self.steps += 1
            return self.steps

    def preferences(self) -> list[lp.float32]:
        with self.lock:
            return self.preferences_.copy()
