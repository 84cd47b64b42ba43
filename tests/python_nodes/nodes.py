"""The Python classes of tests/python_nodes: each serves a service that
tests/python_nodes/services.hpp declares in C++ (LP_PYTHON)."""

import dataclasses
import mmap
import os
import time

import launchpad_client as lp
from launchpad_client._packages import numpy as np
from launchpad_client._wire import shared_memory


class Learner:
    """Learner: C++ calls it; it calls the C++ Counter it was given."""

    def __init__(self, counter, rate: float, name: str, weights: list[lp.float32]):
        self.counter, self.rate, self.name = counter, rate, name
        self.weights = weights
        self.updates = 0

    def update(self, batch: list[lp.float32]) -> float:
        self.updates += 1
        self.counter.add(len(batch))  # Python -> C++
        return self.rate * float(sum(batch))

    def steps(self) -> int:
        return self.updates

    def describe(self) -> str:
        return f"{self.name}:{len(self.weights)}:{self.weights[0]:g}"

    def fail(self, message: str) -> None:
        raise ValueError(message)

    def sleep_ms(self, ms: int) -> int:
        time.sleep(ms / 1000)
        return os.getpid()


class Runner:
    """Runner: its run() calls the C++ Counter, then stops the program."""

    def __init__(self, counter, times: int, then_stop: bool):
        self.counter, self.times, self.then_stop = counter, times, then_stop

    def run(self):
        for _ in range(self.times):
            self.counter.add(1)
        if self.then_stop:
            lp.stop()

    def ping(self) -> int:
        return 1


class Beater:
    """Beater: run() works `seconds`, with a heartbeat() every 0.1 s if
    `beat`, and none otherwise (a hang, past a health_timeout), then waits
    for the stop."""

    def __init__(self, seconds: float, beat: bool):
        self.seconds, self.beat = seconds, beat
        self.done = False

    def run(self):
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            time.sleep(0.1)
            if self.beat:
                lp.heartbeat()
        self.done = True
        while not lp.stop_requested():
            time.sleep(0.05)

    def finished(self) -> bool:
        return self.done

    def pid(self) -> int:
        return os.getpid()


class Tally:
    """Tally: a state that survives restarts (state() and restore())."""

    def __init__(self):
        self.total = 0

    def add(self, x: int) -> int:
        self.total += x
        return self.total

    def pid(self) -> int:
        return os.getpid()

    def env(self, name: str) -> str:
        return os.environ.get(name, "")

    def state(self) -> int:
        return self.total

    def restore(self, saved: int):
        self.total = saved


# Classes that differ from their C++ declarations, one way each.
class NoUpdate:
    def steps(self) -> int:
        return 0


class TwoArguments:
    def update(self, batch: list[lp.float32], extra: int) -> float:
        return 0.0

    def steps(self) -> int:
        return 0


class ScalarBatch:
    def update(self, batch: float) -> float:
        return batch

    def steps(self) -> int:
        return 0


class RaisesInInit:
    def __init__(self):
        raise RuntimeError("no GPU here")

    def update(self, batch: list[lp.float32]) -> float:
        return 0.0

    def steps(self) -> int:
        return 0


class Fanout:
    """Fanout: given a std::vector of handles, a list of clients."""

    def __init__(self, counters):
        self.counters = counters

    def add_all(self, x: int) -> int:
        return sum(counter.add(x) for counter in self.counters)


class Waiter:
    """Waiter: run() polls stop_requested() every 2 ms (after it calls
    stop() itself `stop_after` s in, if that is >= 0), notes when it saw
    the stop, then works 0.3 s more (the rest of run()) and counts that in
    its state; its handler wait_stop() polls the same. The notes are files
    in the directory `notes`, each a CLOCK_MONOTONIC time in seconds."""

    def __init__(self, notes: str, stop_after: float):
        self.notes, self.stop_after = notes, stop_after
        self.rests = 0

    def _note(self, name, text=None):
        with open(os.path.join(self.notes, name), "w") as f:
            f.write(f"{time.monotonic():.6f}" if text is None else text)

    def run(self):
        self._note("run_started")
        start = time.monotonic()
        while not lp.stop_requested():
            if 0 <= self.stop_after <= time.monotonic() - start:
                self._note("stop_called")
                lp.stop()
                self._note("stop_then_requested", str(lp.stop_requested()))
                break
            time.sleep(0.002)
        self._note("run_saw_stop")
        time.sleep(0.3)
        self.rests += 1
        self._note("run_returned")

    def wait_stop(self) -> float:
        self._note("handler_started")
        while not lp.stop_requested():
            time.sleep(0.002)
        self._note("handler_saw_stop")
        return time.monotonic()

    def pid(self) -> int:
        return os.getpid()

    def state(self) -> int:
        return self.rests

    def restore(self, saved: int):
        self.rests = saved


@dataclasses.dataclass
class Pose:
    """pyn::Pose, a plain C++ struct."""
    x: float
    y: float
    frame: str


@dataclasses.dataclass
class Step:
    """pyn::Step, a plain C++ struct holding two Poses."""
    origin: Pose
    deltas: list[lp.float32]
    goal: Pose | None


class Walker:
    """Walker: plain C++ structs arrive as dataclasses, in calls and in
    __init__ (with a string given as a C++ string literal), and go back."""

    def __init__(self, start: Pose, name: str):
        if not isinstance(start, Pose):
            raise TypeError(f"start is a {type(start).__name__}, not a Pose")
        self.poses, self.label = [start], name

    def walk(self, step: Step) -> Pose:
        if not (isinstance(step, Step) and isinstance(step.origin, Pose)):
            raise TypeError(f"step is a {type(step).__name__}, not a Step of Poses")
        frame = step.origin.frame if step.goal is None else step.goal.frame
        pose = Pose(step.origin.x + float(step.deltas[0]),
                    step.origin.y + float(step.deltas[1]), frame)
        self.poses.append(pose)
        return pose

    def trail(self) -> list[Pose]:
        return self.poses

    def name(self) -> str:
        return self.label


@dataclasses.dataclass
class OtherPose:
    x: float
    z: float
    frame: str


class WalkerOtherPose:
    """As Walker, with a Pose whose second field is not C++'s."""

    def walk(self, step: Step) -> OtherPose:
        return OtherPose(0, 0, "")

    def trail(self) -> list[OtherPose]:
        return []

    def name(self) -> str:
        return ""


def _in_shared_memory(values):
    """Whether a numpy array is a view of a mapped segment (no copy)."""
    base = values.base
    return (not values.flags.writeable and isinstance(base, memoryview)
            and isinstance(base.obj, mmap.mmap))


class Mirror:
    """Mirror: echoes float32 arrays, and relays them to the C++ Arrays node
    it was given; on one host, over unix sockets and shared memory."""

    def __init__(self, arrays):
        self.arrays = arrays

    def echo(self, values: list[lp.float32]) -> list[lp.float32]:
        return values

    def in_shared_memory(self, values: list[lp.float32]) -> bool:
        return _in_shared_memory(values)

    def relay(self, n: int, times: int) -> bool:
        sent = np.arange(n, dtype=np.float32)
        ok = True
        for i in range(times):
            back = self.arrays.echo(sent)
            # The first call learns that the node takes segments; each reply
            # comes in one, as this caller says it reads them.
            ok = ok and bool(np.array_equal(back, sent)) and _in_shared_memory(back)
            del back  # its segment goes back to the C++ node with the next call
        return ok

    def shared_messages(self) -> int:
        return shared_memory.pool().figures()["messages"]

    def shared_bytes(self) -> int:
        return shared_memory.pool().figures()["bytes"]

    def shared_fallbacks(self) -> int:
        return shared_memory.pool().figures()["fallbacks"]

    def pid(self) -> int:
        return os.getpid()
