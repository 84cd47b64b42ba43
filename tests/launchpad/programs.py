"""Launchpad programs as Launchpad's documentation writes them, run by
test_launchpad.py and the slurm suite (tests/unit-slurm.cpp):
`programs.py NAME LAUNCH_TYPE RESULT_FILE [--lp_* flags]`. Each one's last
node writes what it saw to RESULT_FILE (JSON) and stops the program."""

import functools
import json
import os
import signal
import sys
import threading
import time

import numpy as np

import launchpad as lp


class Greeter:
    def greet(self, name):
        return f"hello, {name}"


class Asker:
    def __init__(self, greeter, result_file):
        self._greeter, self._result_file = greeter, result_file

    def run(self):
        seen = {"sync": self._greeter.greet("world"),
                "future": self._greeter.futures.greet("futures").result()}
        with open(self._result_file, "w") as f:
            json.dump(seen, f)
        lp.stop()


def hello(result_file):
    program = lp.Program("hello")
    greeter = program.add_node(lp.CourierNode(Greeter), label="greeter")
    program.add_node(lp.CourierNode(Asker, greeter, result_file), label="asker")
    return program


class Producer:
    def __init__(self, offset):
        self._offset = offset()  # a lambda or a partial, as Acme passes its factories

    def work(self, context):
        return context + self._offset

    def echo(self, value):
        return value

    def named(self, a, b=2, *, c=3, **more):
        return (a, b, c, more)

    def unsendable(self):
        return object()


class Consumer:
    def __init__(self, producers, result_file):
        self._producers, self._result_file = producers, result_file

    def run(self):
        futures = [p.futures.work(i) for i, p in enumerate(self._producers)]
        seen = {"work": [f.result() for f in futures]}
        first = self._producers[0]
        values = [None, True, -7, 2.5, "text", b"\x00\xff", [1, [2, "three"]],
                  {"a": 1, "b": [None, False]}, np.arange(5, dtype=np.float32),
                  np.array([1, -2], dtype=np.int64), np.uint8(200)]
        seen["echo"] = []
        for value in values:
            back = first.echo(value)
            seen["echo"].append({"type": type(back).__name__,
                                 "dtype": str(back.dtype) if isinstance(back, np.ndarray) else None,
                                 "value": back.tolist() if isinstance(back, (np.ndarray, np.generic))
                                 else back.hex() if isinstance(back, bytes) else back})
        # Courier's values come back as they went: each is compared here,
        # in the node, where their types are still there.
        kept = [(1, "two", (3.0, None)), (), {1: "one", (2, "b"): [b"x"], None: (), 2.5: True},
                np.arange(24, dtype=np.int16).reshape(2, 3, 4), np.array(7.5), np.float32(1.5),
                np.array([[True, False]]), np.array([1 + 2j], dtype=np.complex64),
                np.zeros((0, 3), dtype=np.uint64), np.float16(0.5),
                {"obs": (np.ones((2, 2), dtype=np.float32), [np.int8(-1)])}]
        seen["kept"] = [same(first.echo(v), v) and same(first.futures.echo(v).result(), v)
                        for v in kept]
        seen["named"] = [same(first.named(1, c=(2,), z={3: 4}), (1, 2, (2,), {"z": {3: 4}})),
                         same(first.futures.named(b=[5], a=np.int64(6)).result(),
                              (np.int64(6), [5], 3, {}))]
        try:
            first.unsendable()
            seen["unsendable"] = "no error"
        except Exception as e:
            seen["unsendable"] = f"{type(e).__name__}: {e}"
        try:
            first.echo(object())
            seen["unsent"] = "no error"
        except TypeError as e:
            seen["unsent"] = str(e)
        with open(self._result_file, "w") as f:
            json.dump(seen, f)
        lp.stop()


def same(back, value):
    """Whether `back` is `value`, type for type, dtype and shape for arrays."""
    if type(back) is not type(value):
        return False
    if isinstance(value, (np.ndarray, np.generic)):
        return back.dtype == value.dtype and back.shape == value.shape and bool(
            np.array_equal(back, value))
    if isinstance(value, (list, tuple)):
        return len(back) == len(value) and all(same(b, v) for b, v in zip(back, value))
    if isinstance(value, dict):
        return list(back) == list(value) and all(
            type(k) is type(j) and same(back[k], value[k]) for k, j in zip(value, back))
    return back == value


def consumer_producers(result_file, num_producers=3):
    program = lp.Program("consumer_producers")
    with program.group("producer"):
        producers = [program.add_node(lp.CourierNode(
            Producer, offset=(lambda: 100) if i % 2 else functools.partial(int, "1000")))
            for i in range(num_producers)]
    program.add_node(lp.CourierNode(Consumer, producers=producers, result_file=result_file),
                     label="consumer")
    return program


class Doubler:
    """Batches its calls as Launchpad's docs write it: wrapped in __init__."""

    def __init__(self):
        self._sizes = []
        self.double = lp.batched_handler(batch_size=4, max_parallelism=2)(self.double)
        self.pair = lp.batched_handler(batch_size=3, timeout=0.05, pad_batch=True)(self.pair)

    def double(self, values):
        self._sizes.append(len(values))
        return values * 2

    def pair(self, point, scale, label=None):
        # point: a tuple of two arrays, stacked element by element; scale: a
        # float64 array; label: a list of strings.
        x, y = point
        return {"sum": x + y * scale, "labels": [f"{l}!" for l in label]}

    def sizes(self):
        return self._sizes


class BatchCaller:
    def __init__(self, doubler, result_file):
        self._doubler, self._result_file = doubler, result_file

    def run(self):
        futures = [self._doubler.futures.double(i) for i in range(8)]
        seen = {"doubled": [int(f.result()) for f in futures],
                "types": sorted({type(f.result()).__name__ for f in futures})}
        # One call alone: its batch runs after the timeout (200 ms), with one.
        seen["alone"] = int(self._doubler.double(21))
        pairs = [self._doubler.futures.pair((np.float32(i), np.float32(1)), 10.0, label=f"p{i}")
                 for i in range(2)]
        seen["pairs"] = [(float(r["sum"]), r["labels"]) for r in (f.result() for f in pairs)]
        try:
            self._doubler.double("text")
            seen["unsplittable"] = "no error"
        except Exception as e:
            seen["unsplittable"] = f"{type(e).__name__}: {e}"
        seen["sizes"] = self._doubler.sizes()
        with open(self._result_file, "w") as f:
            json.dump(seen, f)
        lp.stop()


def batched(result_file):
    program = lp.Program("batched")
    doubler = program.add_node(lp.CourierNode(Doubler), label="doubler")
    program.add_node(lp.PyClassNode(BatchCaller, doubler, result_file), label="caller")
    return program


class Stepped:
    """A worker that a test steps by hand: its run() must not be called."""

    def __init__(self):
        self._steps = 0
        self._ran = False

    def step(self):
        self._steps += 1
        return self._steps

    def ran(self):
        return self._ran

    def run(self):
        self._ran = True


def drive(worker, result_file):
    seen = {"steps": [worker.step() for _ in range(3)], "ran": worker.ran()}
    with open(result_file, "w") as f:
        json.dump(seen, f)
    lp.stop()


def disabled_run(result_file):
    program = lp.Program("disabled_run")
    node = lp.CourierNode(Stepped)
    node.disable_run()
    worker = program.add_node(node, label="worker")
    program.add_node(lp.PyNode(drive, worker, result_file), label="driver")
    return program


# Clean termination with each of Launchpad's four ways for a node to see the
# stop (its program_wait example): each node's constructor waits for it, as
# there, then writes its name to the result directory; `_stop_program`
# stops the program once the four wait.
def _note(directory, name):
    with open(os.path.join(directory, name), "w"):
        pass


def _sleep(directory):
    _note(directory, "waiting_sleep")
    while not lp.wait_for_stop(0.2):
        pass
    _note(directory, "sleep")


def _wait_for_stop(directory):
    _note(directory, "waiting_wait_for_stop")
    lp.wait_for_stop()
    _note(directory, "wait_for_stop")


def _stop_event(directory):
    _note(directory, "waiting_stop_event")
    lp.stop_event().wait()
    _note(directory, "stop_event")


def _register_stop_handler(directory):
    stopped = threading.Event()
    lp.register_stop_handler(stopped.set)
    dropped = lambda: _note(directory, "unregistered_handler_called")  # noqa: E731
    lp.register_stop_handler(dropped)
    lp.unregister_stop_handler(dropped)
    _note(directory, "waiting_register_stop_handler")
    stopped.wait()
    _note(directory, "register_stop_handler")


WAYS = ("sleep", "wait_for_stop", "stop_event", "register_stop_handler")


def _stop_program(directory):
    deadline = time.monotonic() + 60
    while not all(os.path.exists(os.path.join(directory, "waiting_" + w)) for w in WAYS):
        if time.monotonic() > deadline:
            raise RuntimeError("the four nodes did not start waiting within 60 s")
        time.sleep(0.05)
    lp.stop()


def program_wait(directory):
    program = lp.Program("program_wait")
    for way, function in (("sleep", _sleep), ("wait_for_stop", _wait_for_stop),
                          ("stop_event", _stop_event),
                          ("register_stop_handler", _register_stop_handler)):
        program.add_node(lp.CourierNode(function, directory), label=way)
    program.add_node(lp.CourierNode(_stop_program, directory), label="stop_program")
    return program


# A node that waits for the stop, which the launching script gives: by
# lp.stop() (stop_from=script) or the controller's stop() (controller), or
# by being killed (killed: it SIGKILLs itself once the node waits).
def _until_stopped(directory):
    _note(directory, "started")
    lp.wait_for_stop()
    _note(directory, "stopped")


def until_stopped(directory):
    program = lp.Program("until_stopped")
    program.add_node(lp.PyNode(_until_stopped, directory), label="waiter")
    return program


def stopped_from_script(how, launch_type, directory):
    controller = lp.launch(until_stopped(directory), launch_type=launch_type)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(directory, "started")):
        if time.monotonic() > deadline:
            sys.exit("the node did not start within 60 s")
        time.sleep(0.05)
    if how == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "script":
        lp.stop()
    else:
        controller.stop()
    controller.wait()


# MultiThreadingColocation: a counter served and a caller of it, colocated
# (the caller in a colocation of its own inside, to nest one), beside a node
# that only waits for the stop; a node outside calls the counter through
# the handle its colocation's add_node gave. Each writes its pid, what it
# saw and, once the stop reached it, "<name>_stopped".
def _write(directory, name, seen):
    with open(os.path.join(directory, name + ".json.part"), "w") as f:
        json.dump(seen, f)
    os.rename(os.path.join(directory, name + ".json.part"), os.path.join(directory, name + ".json"))


class Counter:
    def __init__(self, directory):
        self._directory, self._total = directory, 0
        self._lock = threading.Lock()

    def add(self, n):
        with self._lock:
            self._total += n
            return self._total

    def pid(self):
        return os.getpid()

    def run(self):
        lp.wait_for_stop()
        _note(self._directory, "counter_stopped")


def _colocated_caller(counter, directory):
    seen = {"pid": os.getpid(), "counter_pid": counter.pid(), "sync": counter.add(2), "future": counter.futures.add(3).result()}
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(directory, "outsider.json")):
        if time.monotonic() > deadline:
            raise RuntimeError("the outsider did not call the counter within 60 s")
        time.sleep(0.05)
    _write(directory, "caller", seen)
    lp.stop()
    lp.wait_for_stop()
    _note(directory, "caller_stopped")


def _colocated_waiter(directory):
    _write(directory, "waiter", {"pid": os.getpid()})
    lp.wait_for_stop()
    _note(directory, "waiter_stopped")


def _outsider(counter, directory):
    _write(directory, "outsider", {"pid": os.getpid(), "counter_pid": counter.pid(),
                                   "added": counter.add(10), "name": repr(counter)})
    lp.wait_for_stop()
    _note(directory, "outsider_stopped")


def colocated(directory):
    program = lp.Program("colocated")
    counter = lp.CourierNode(Counter, directory)
    colocation = lp.MultiThreadingColocation([lp.PyNode(_colocated_waiter, directory)])
    counter_handle = colocation.add_node(counter)
    colocation.add_node(lp.MultiThreadingColocation(
        [lp.PyNode(_colocated_caller, counter.create_handle(), directory)]))
    program.add_node(colocation, label="colocated")
    program.add_node(lp.PyNode(_outsider, counter_handle, directory), label="outsider")
    return program


# A C++ program as a node (lp.CppNode, examples/launchpad_cpp): a node
# calls it once, then waits for the stop, which comes when the test
# SIGKILLs the C++ node's process (its node fails with it).
def _call_until_stopped(calculator, directory):
    if calculator.add(1, 2) == 3:
        _note(directory, "called")
    lp.wait_for_stop()
    _note(directory, "stopped")


def cpp_killed(directory):
    program = lp.Program("cpp_killed")
    calculator = program.add_node(lp.CppNode(os.environ["LP_EXAMPLE_LAUNCHPAD_CPP"]),
                                  label="calculator")
    program.add_node(lp.PyNode(_call_until_stopped, calculator, directory), label="caller")
    return program


def cpp_under_tests(result_file):
    """The C++ node under test_mt and test_mp, called by this process
    through its handle's dereference()."""
    results = {}
    for launch_type in ("test_mt", "test_mp"):
        program = lp.Program("cpp_under_tests")
        handle = program.add_node(lp.CppNode(os.environ["LP_EXAMPLE_LAUNCHPAD_CPP"]),
                                  label="calculator")
        controller = lp.launch(program, launch_type=launch_type, test_case=_Cleanups())
        calculator = handle.dereference()
        results[launch_type] = [calculator.add(40, 2), calculator.greet("test")]
        controller.stop_and_wait()
    with open(result_file, "w") as f:
        json.dump(results, f)


def _add_once(calculator, result_file):
    with open(result_file, "w") as f:
        json.dump({"add": calculator.add(40, 2)}, f)
    lp.stop()


def cpp_tls(result_file):
    """The C++ node under local_mp with --lp_tls=on: its process reads the
    launch's credentials, and the Python node calls it over TLS."""
    program = lp.Program("cpp_tls")
    calculator = program.add_node(lp.CppNode(os.environ["LP_EXAMPLE_LAUNCHPAD_CPP"]),
                                  label="calculator")
    program.add_node(lp.PyNode(_add_once, calculator, result_file), label="user")
    lp.launch(program, launch_type="local_mp", lp_flags=("--lp_tls=on",)).wait()


class _Cleanups:
    """A test case's addCleanup, for a launch made outside a test: the
    caller stops the program itself."""

    def addCleanup(self, function):
        del function


# lp.register_stop_handler in the launching script, as Launchpad allows it:
# a handler is called once, when the script stops its program (here
# lp.stop()), or when the program has ended by a node's lp.stop(); one
# unregistered is not called. The calls are counted, then noted.
def _stop_itself():
    lp.stop()


def stop_handlers_in_script(launch_type, directory):
    calls = {"first": 0, "second": 0, "unregistered": 0}

    def handler(name):
        def called():
            calls[name] += 1
        return called

    dropped = handler("unregistered")
    lp.register_stop_handler(handler("first"))
    lp.register_stop_handler(dropped)
    lp.unregister_stop_handler(dropped)
    stopped_from_script("script", launch_type, directory)  # lp.stop() in the script
    after_first = dict(calls)
    lp.register_stop_handler(handler("second"))
    program = lp.Program("stops_itself")
    program.add_node(lp.PyNode(_stop_itself), label="stopper")
    lp.launch(program, launch_type=launch_type).wait()
    _note(directory, "after_script_stop_" + "_".join(f"{k}{v}" for k, v in after_first.items()))
    _note(directory, "after_node_stop_" + "_".join(f"{k}{v}" for k, v in calls.items()))


if __name__ == "__main__":
    name, launch_type, result = sys.argv[1:4]
    if name == "stop_handlers_in_script":
        stop_handlers_in_script(launch_type, result)
        sys.exit(0)
    if name in ("cpp_under_tests", "cpp_tls"):
        {"cpp_under_tests": cpp_under_tests, "cpp_tls": cpp_tls}[name](result)
        sys.exit(0)
    if name.startswith("stop_from_"):
        stopped_from_script(name[len("stop_from_"):], launch_type, result)
        sys.exit(0)
    programs = {"hello": hello, "consumer_producers": consumer_producers, "batched": batched,
                "disabled_run": disabled_run, "program_wait": program_wait,
                "colocated": colocated,
                "cpp_killed": cpp_killed, "until_stopped": until_stopped}
    lp.launch(programs[name](result), launch_type=launch_type).wait()
