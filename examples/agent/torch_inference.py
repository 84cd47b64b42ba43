"""The inference node of examples/agent in PyTorch (--inference=torch): the
policy of impala.py's Network, run with torch on each actor's observations,
with the parameters the learner last published (through the cacher). C++
declares it (agent.hpp, struct TorchInference). docs/agent.md compares it
with the C++ inference node.
"""

import dataclasses
import time

import numpy as np
import torch

import launchpad_client as lp

import impala

REFRESH_SECONDS = 0.01  # as the C++ inference node


@dataclasses.dataclass
class ActionProbabilities:
    probabilities: list[lp.float32]
    policy_version: int


class TorchInference:
    # One call at a time: PyTorch's forward on a batch is the work, and the
    # network changes between calls.

    def __init__(self, weights, hidden: int):
        torch.set_num_threads(1)
        self.weights = weights
        self.network = impala.Network(hidden=hidden)
        self.version = None
        self.fetched = 0.0

    def _refresh(self):
        published = self.weights.get_parameters()
        self.fetched = time.monotonic()
        if published["version"] == self.version:
            return
        flat = torch.as_tensor(np.asarray(published["policy"], dtype=np.float32))
        layers = [self.network.torso[0], self.network.torso[2], self.network.policy]
        i = 0
        with torch.no_grad():
            for layer in layers:
                for p in (layer.weight, layer.bias):
                    p.copy_(flat[i:i + p.numel()].reshape(p.shape))
                    i += p.numel()
        self.version = published["version"]

    def act(self, observations: lp.Tensor[lp.float32]) -> ActionProbabilities:
        if self.version is None or time.monotonic() - self.fetched >= REFRESH_SECONDS:
            try:
                self._refresh()
            except lp.LaunchpadError:
                if self.version is None:
                    raise  # no parameters yet to serve with
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(observations, dtype=np.float32).reshape(-1, 4))
            probabilities = torch.softmax(self.network.policy(self.network.torso(x)), -1)
        return ActionProbabilities(probabilities.numpy().reshape(-1), int(self.version))
