"""The Python node of bench_soak --python (struct PySoak in bench_soak.cpp).

The same methods as the C++ node Soak, each counted. Handlers run at once on
their connections' threads, as the C++ node's do.
"""

import os
import threading

import launchpad_client as lp


class Soak:
    lp_concurrent_handlers = True

    def __init__(self):
        self._lock = threading.Lock()
        self._served = 0

    def _count(self):
        with self._lock:
            self._served += 1

    def add(self, x: int) -> int:
        self._count()
        return x + 1

    def echo(self, text: str) -> str:
        self._count()
        return text

    def echo_floats(self, values: list[lp.float32]) -> list[lp.float32]:
        self._count()
        return values

    def calls(self) -> int:
        return self._served

    def pid(self) -> int:
        return os.getpid()
