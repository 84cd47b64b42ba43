"""Launchpad programs as Launchpad's documentation writes them, run by
test_launchpad.py and the slurm suite (tests/unit-slurm.cpp):
`programs.py NAME LAUNCH_TYPE RESULT_FILE [--lp_* flags]`. Each one's last
node writes what it saw to RESULT_FILE (JSON) and stops the program."""

import functools
import json
import sys

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


if __name__ == "__main__":
    name, launch_type, result_file = sys.argv[1:4]
    program = {"hello": hello, "consumer_producers": consumer_producers}[name](result_file)
    sys.exit(lp.launch(program, launch_type=launch_type, lp_flags=tuple(sys.argv[4:])))
