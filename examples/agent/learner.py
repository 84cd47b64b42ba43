"""The learner of examples/agent: a Python node (docs/python_nodes.md) that
trains impala.py's network with PyTorch on the unrolls C++ actors put in
the replay queue, and publishes its parameters to the inference node
through the cacher. C++ declares it (agent.hpp, struct Learner); the type
hints here say the same types.

Its figures (launchpad_client.metrics: the status page plots them,
Prometheus scrapes them at /lp/v1/metrics):
  average_return       series: the average return of the last 100 episodes
  env_steps_per_second series: environment steps learned from per second
  env_steps, episodes, updates, policy_lag   gauges (from the checkpointed counts)
"""

import collections
import dataclasses
import queue
import threading
import time

import numpy as np
import torch

import launchpad_client as lp
from launchpad_client import metrics

import impala

TABLE = "unrolls"


@dataclasses.dataclass
class Parameters:
    version: int
    policy: list[lp.float32]


def stack(unrolls):
    """The batch of impala.Learner.update from a list of unrolls (dicts, as
    the replay node's sample gives them), side by side along the
    environments' axis: [T, E1 + E2 + ...]."""
    def cat(key):
        return np.concatenate([u[key] for u in unrolls], axis=1)
    return (cat("observations"), cat("actions"), cat("behaviour_logp"), cat("rewards"),
            cat("terminated").astype(bool), cat("truncated").astype(bool), cat("final_observations"))


class Learner:
    lp_concurrent_handlers = True  # get_parameters answers while run() trains

    def __init__(self, replay, settings):
        torch.set_num_threads(1)  # two cores: one for this, one for the rest
        self.replay = replay
        self.settings = settings
        config = impala.Config(learning_rate=settings["learning_rate"], hidden=settings["hidden"])
        self.learner = impala.Learner(config, seed=settings["seed"])
        self.lock = threading.Lock()  # run() changes what get_parameters and state() read
        self.training = threading.Lock()  # an update is whole in a checkpoint
        self.steps = 0
        self.episodes = 0
        self.seconds = 0.0  # of training, counted from the first batch
        self.recent = collections.deque(maxlen=100)
        self.published = Parameters(0, self.learner.network.policy_parameters())

    # --- Calls ---

    def get_parameters(self) -> Parameters:
        with self.lock:
            return self.published

    # --- Checkpoints (lp_save / lp_restore in agent.hpp) ---

    def state(self):
        # agent.hpp's learner_state, as a dict (a checkpoint's struct is
        # taken as a dict, not as a dataclass).
        with self.training, self.lock:
            network, moments, step = self.learner.state()
            return {"network": network, "moments": moments, "adam_step": step,
                    "updates": self.learner.updates, "steps": self.steps,
                    "episodes": self.episodes, "seconds": self.seconds,
                    "recent_returns": np.asarray(self.recent, dtype=np.float32)}

    def restore(self, saved):
        with self.lock:
            self.learner.restore(saved["network"], saved["moments"], saved["adam_step"])
            self.learner.updates = int(saved["updates"])
            self.steps = int(saved["steps"])
            self.episodes = int(saved["episodes"])
            self.seconds = float(saved["seconds"])
            self.recent.extend(float(r) for r in saved["recent_returns"])
            self.published = Parameters(self.learner.updates, self.learner.network.policy_parameters())
        print(f"learner: restored at update {self.learner.updates}, {self.steps} steps, "
              f"{self.seconds:.1f} s", flush=True)

    # --- Training ---

    def _fetch(self, batches, stop):
        """Samples the next batch while the last one trains (a thread: the
        call waits on the socket without the GIL)."""
        n = int(self.settings["batch"])
        try:
            while not stop.is_set():
                batches.put([s["item"] for s in self.replay.sample(TABLE, n)])
        except Exception as e:  # the program stops (503 stopping), or a failure run() raises
            batches.put(e)

    def run(self):
        s = self.settings
        returns_curve = metrics.series("average_return")
        speed_curve = metrics.series("env_steps_per_second")
        gauges = {name: metrics.gauge(name) for name in
                  ("env_steps", "episodes", "updates", "policy_lag")}
        batches = queue.Queue(maxsize=1)
        stop = threading.Event()
        threading.Thread(target=self._fetch, args=(batches, stop), daemon=True).start()
        steps_at_start = self.steps
        started = None  # when the first batch came, less the seconds restored
        window = (time.monotonic(), self.steps)  # for steps/s
        why = None
        # Where the learner's time goes: waiting for a batch, stacking it,
        # the update, publishing the parameters.
        spent = {"waiting": 0.0, "stacking": 0.0, "updating": 0.0, "publishing": 0.0}
        mark = time.monotonic()
        # The update's CPU time on this thread (torch runs it on one): what
        # the process spends beside it is the calls' and the batches' share,
        # which the update's wall time would blur on a busy machine.
        update_cpu = 0.0

        def lap(phase):
            nonlocal mark
            t = time.monotonic()
            spent[phase] += t - mark
            mark = t

        while not lp.stop_requested():
            unrolls = batches.get()
            lap("waiting")
            if isinstance(unrolls, Exception):
                if lp.stop_requested():
                    break
                raise unrolls
            now = time.monotonic()
            if started is None:
                started = now - self.seconds
                cpu_at_start = time.process_time()
                window = (now, self.steps)
            batch = stack(unrolls)
            lap("stacking")
            with self.training:
                update_started = time.thread_time()
                self.learner.update(*batch)
                update_cpu += time.thread_time() - update_started
            lap("updating")
            lag = self.learner.updates - min(int(u["policy_version"]) for u in unrolls)
            with self.lock:
                self.steps += batch[1].size
                for u in unrolls:
                    self.recent.extend(float(r) for r in u["episode_returns"])
                    self.episodes += len(u["episode_returns"])
                self.seconds = time.monotonic() - started
                self.published = Parameters(self.learner.updates,
                                            self.learner.network.policy_parameters())
            lap("publishing")
            average = float(np.mean(self.recent)) if self.recent else 0.0
            now = time.monotonic()
            if now - window[0] >= 0.5:
                rate = (self.steps - window[1]) / (now - window[0])
                window = (now, self.steps)
                returns_curve.record(average)
                speed_curve.record(rate)
                for name, value in (("env_steps", self.steps), ("episodes", self.episodes),
                                    ("updates", self.learner.updates), ("policy_lag", lag)):
                    gauges[name].set(value)
            if s["target"] > 0 and len(self.recent) == 100 and average >= s["target"]:
                why = f"reached an average return of {average:.1f} over the last 100 episodes"
            elif self.steps >= s["max_steps"]:
                why = f"stopped at --max_steps (average return {average:.1f})"
            elif self.seconds >= s["max_seconds"]:
                why = f"stopped at --max_seconds (average return {average:.1f})"
            if why:
                break
        stop.set()
        if why:
            returns_curve.record(float(np.mean(self.recent)) if self.recent else 0.0)
            print(f"learner: {why} after {self.steps} env steps, {self.episodes} episodes, "
                  f"{self.learner.updates} updates in {self.seconds:.1f} s of training "
                  f"({self.steps / max(self.seconds, 1e-9):.0f} env steps/s)", flush=True)
            total = sum(spent.values()) or 1.0
            print("learner: of its time " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in spent.items())
                  + f"; {1e6 * spent['updating'] / max(self.steps - steps_at_start, 1):.1f} us of update per step"
                  + f"; process CPU {1e6 * (time.process_time() - cpu_at_start) / max(self.steps - steps_at_start, 1):.1f} us per step"
                  + f" (update {1e6 * update_cpu / max(self.steps - steps_at_start, 1):.2f})",
                  flush=True)
            lp.stop()
