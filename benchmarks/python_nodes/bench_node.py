"""The Python node of benchmarks/python_nodes (peer.cpp, struct PyBench).

C++ declares its methods; the type hints here say the same types. The node
serves `add` and `echo` to the C++ driver, and times its own calls to the
C++ node `target` (a handle: a typed client, connected on first use), so
that Python -> C++ is measured where a Python node makes such calls.
"""

import os
import threading
import time

import launchpad_client as lp


class PyBench:
    # add and echo keep no state: calls run on their connections' threads at
    # once, as a gRPC server's handlers do.
    lp_concurrent_handlers = True

    def __init__(self, target):
        self.target = target  # the C++ node "target" (struct Target)

    def add(self, x: int) -> int:
        return x + 1

    def echo(self, values: list[lp.float32]) -> list[lp.float32]:
        # values is a numpy array (float32); it goes back as it came.
        return values

    def pid(self) -> int:
        return os.getpid()

    def cpp_small_calls(self, n: int) -> list[lp.float64]:
        """Microseconds of each of n blocking target.add(i) calls, checked."""
        add = self.target.add
        out = []
        for i in range(n):
            start = time.perf_counter()
            got = add(i)
            out.append((time.perf_counter() - start) * 1e6)
            if got != i + 1:
                raise ValueError(f"target.add({i}) returned {got}")
        return out

    def cpp_rate(self, callers: int, seconds: float) -> list[lp.float64]:
        """`callers` threads calling target.add through the one handle for
        `seconds`: [calls, wall seconds]. Every result is checked."""
        add = self.target.add
        start_line = threading.Barrier(callers + 1)
        counts = [0] * callers
        errors = []
        stop_at = [0.0]

        def caller(k):
            start_line.wait()
            n = 0
            try:
                while time.perf_counter() < stop_at[0]:
                    if add(n) != n + 1:
                        raise ValueError(f"target.add({n}) returned a wrong sum")
                    n += 1
            except Exception as e:  # reported below, in the caller's reply
                errors.append(e)
            counts[k] = n

        threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
        for t in threads:
            t.start()
        start = time.perf_counter()
        stop_at[0] = start + seconds
        start_line.wait()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        if errors:
            raise errors[0]
        return [float(sum(counts)), wall]
