"""IMPALA's learner (Espeholt et al. 2018, "IMPALA: Scalable Distributed
Deep-RL with Importance Weighted Actor-Learner Architectures"): an
actor-critic whose targets are V-trace, which corrects for the actors acting
with a policy a few updates older than the learner's.

The network, the V-trace targets and one update, in PyTorch. Both the
example's learner (learner.py, a Launchpad node) and the one-process
baseline (benchmarks/agent/baseline.py) use this module, so that they run
the same algorithm on the same network.

The network is IMPALA's shape at CartPole's size: a torso of two tanh layers
of 64 units shared by a policy head (2 logits) and a value head. The actors'
C++ inference (examples/agent/agent.hpp, `mlp`) computes the same policy
from `policy_parameters()`, a flat float32 array in the order below.
"""

import dataclasses

import numpy as np
import torch
from torch import nn


@dataclasses.dataclass
class Config:
    hidden: int = 64
    learning_rate: float = 1e-3
    discount: float = 0.99
    entropy_cost: float = 0.01
    baseline_cost: float = 0.5
    max_grad_norm: float = 40.0
    reward_scale: float = 0.1  # CartPole pays 1 a step: values near 10, not 100
    rho_bar: float = 1.0  # V-trace's clip of importance weights in the targets
    pg_rho_bar: float = 1.0  # ... and in the policy gradient's advantages
    c_bar: float = 1.0  # ... and in the traces


class Network(nn.Module):
    def __init__(self, observations=4, actions=2, hidden=64):
        super().__init__()
        self.torso = nn.Sequential(nn.Linear(observations, hidden), nn.Tanh(),
                                   nn.Linear(hidden, hidden), nn.Tanh())
        self.policy = nn.Linear(hidden, actions)
        self.value = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.torso(x)
        return self.policy(h), self.value(h).squeeze(-1)

    def policy_parameters(self):
        """The policy's parameters as the C++ inference reads them: each
        layer's weight (out x in, row-major) then its bias, torso first, then
        the policy head."""
        layers = [self.torso[0], self.torso[2], self.policy]
        with torch.no_grad():
            return torch.cat([t.reshape(-1) for l in layers for t in (l.weight, l.bias)]).numpy()


def vtrace(behaviour_logp, target_logp, rewards, discounts, values, bootstrap, config):
    """V-trace targets vs and policy-gradient advantages, all [T, B]
    (bootstrap [B]): the paper's section 4.1, with no gradient."""
    with torch.no_grad():
        rhos = torch.exp(target_logp - behaviour_logp)
        clipped = torch.clamp(rhos, max=config.rho_bar)
        cs = torch.clamp(rhos, max=config.c_bar)
        next_values = torch.cat([values[1:], bootstrap[None]])
        deltas = clipped * (rewards + discounts * next_values - values)
        acc = torch.zeros_like(bootstrap)
        corrections = []
        for t in range(values.shape[0] - 1, -1, -1):
            acc = deltas[t] + discounts[t] * cs[t] * acc
            corrections.append(acc)
        vs = torch.stack(corrections[::-1]) + values
        next_vs = torch.cat([vs[1:], bootstrap[None]])
        advantages = torch.clamp(rhos, max=config.pg_rho_bar) * (rewards + discounts * next_vs - values)
    return vs, advantages


class Learner:
    """The network, its optimiser and one update from a batch of unrolls."""

    def __init__(self, config=Config(), seed=0):
        torch.manual_seed(seed)
        self.config = config
        self.network = Network(hidden=config.hidden)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate)
        self.updates = 0

    def update(self, observations, actions, behaviour_logp, rewards, terminated, truncated,
               final_observations):
        """One step of gradient descent from T steps of B environments.

        observations [T+1, B, 4]: what each step acted on, and at T the
        observation after the last step (the bootstrap); actions,
        behaviour_logp, rewards, terminated, truncated [T, B]; and
        final_observations [T, B, 4], where an episode was truncated (500
        steps), the observation it ended on, whose value the target
        bootstraps from (elsewhere unused)."""
        c = self.config
        obs = torch.as_tensor(observations, dtype=torch.float32)
        actions = torch.as_tensor(actions, dtype=torch.int64)
        behaviour_logp = torch.as_tensor(behaviour_logp, dtype=torch.float32)
        rewards = torch.as_tensor(rewards, dtype=torch.float32) * c.reward_scale
        terminated = torch.as_tensor(terminated, dtype=torch.bool)
        truncated = torch.as_tensor(truncated, dtype=torch.bool)
        T, B = actions.shape
        logits, values = self.network(obs.reshape((T + 1) * B, -1))
        logits = logits.reshape(T + 1, B, -1)[:T]
        values = values.reshape(T + 1, B)
        values, bootstrap = values[:T], values[T].detach()
        logp_all = torch.log_softmax(logits, -1)
        target_logp = logp_all.gather(2, actions[..., None]).squeeze(-1)
        if truncated.any():
            # A truncated episode goes on past its last step: its target
            # bootstraps from the value of where it stopped.
            where = truncated.nonzero(as_tuple=True)
            final = torch.as_tensor(np.asarray(final_observations)[where[0].numpy(), where[1].numpy()],
                                    dtype=torch.float32)
            with torch.no_grad():
                rewards[where] += c.discount * self.network(final)[1]
        discounts = c.discount * (~(terminated | truncated)).float()
        vs, advantages = vtrace(behaviour_logp, target_logp.detach(), rewards, discounts,
                                values.detach(), bootstrap, c)
        policy_loss = -(target_logp * advantages).mean()
        baseline_loss = 0.5 * ((vs - values) ** 2).mean()
        entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
        loss = policy_loss + c.baseline_cost * baseline_loss - c.entropy_cost * entropy
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.network.parameters(), c.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        return float(loss)

    # --- Checkpoints: everything as flat float32 arrays. ---
    def state(self):
        params = torch.cat([p.detach().reshape(-1) for p in self.network.parameters()])
        moments = []
        step = 0.0
        for p in self.network.parameters():
            s = self.optimizer.state.get(p, {})
            if s:
                moments += [s["exp_avg"].reshape(-1), s["exp_avg_sq"].reshape(-1)]
                step = float(s["step"])
            else:
                moments += [torch.zeros(p.numel()), torch.zeros(p.numel())]
        return params.numpy().copy(), torch.cat(moments).numpy().copy(), step

    def restore(self, params, moments, step):
        params = torch.as_tensor(np.array(params, dtype=np.float32))  # a copy: restored arrays are read-only
        moments = torch.as_tensor(np.array(moments, dtype=np.float32))
        i = j = 0
        with torch.no_grad():
            for p in self.network.parameters():
                n = p.numel()
                p.copy_(params[i:i + n].reshape(p.shape))
                i += n
                if step > 0:
                    self.optimizer.state[p] = {
                        "step": torch.tensor(float(step)),
                        "exp_avg": moments[j:j + n].reshape(p.shape).clone(),
                        "exp_avg_sq": moments[j + n:j + 2 * n].reshape(p.shape).clone()}
                j += 2 * n
