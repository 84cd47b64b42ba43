"""The signs of life of a Python node's run(), for its group's
health_timeout, as a C++ node's run() makes them (run_progress.hpp): a
call through a peer's client, `stop_requested()`, a metric, and
`heartbeat()`. Only signs from run()'s own thread count; while it waits in
a call it counts as alive (the call has its deadline, and its callee its
own health_timeout). The runtime's watch (main.py) reads `silence()`.

Outside a node's run() they do nothing, so a library may make them freely.
"""

from __future__ import annotations

import threading
import time

_run_thread: int | None = None  # the ident of run()'s thread, while run() runs
_signs = 0  # written by run()'s thread alone
_waits = 0
# The watch's own: the signs it saw last, and since when it has.
_seen = -1
_quiet_since = 0.0


def _on_run_thread() -> bool:
    return _run_thread is not None and threading.get_ident() == _run_thread


def sign() -> None:
    """A sign of progress, if this thread runs run()."""
    global _signs
    if _on_run_thread():
        _signs += 1


def heartbeat() -> None:
    """From run(): a sign that it makes progress, for its group's
    health_timeout (docs/launching.md, "Hung nodes"), as lp::heartbeat()
    in C++. Calls, stop_requested() and metrics are signs already.
    Elsewhere it does nothing."""
    sign()


class _Waiting:
    """`with waiting:` around a wait of run()'s in the library (a call):
    alive until it returns. An object, not a generator: it wraps every call
    a node makes through a handle, and costs little when not in run()."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _waits
        if _on_run_thread():
            _waits += 1

    def __exit__(self, *exception: object) -> None:
        global _waits
        # The same thread: run() cannot have ended during its own call.
        if _on_run_thread():
            _waits -= 1
            sign()


waiting = _Waiting()


def begin() -> None:
    """Called on run()'s thread as it starts."""
    global _run_thread
    _run_thread = threading.get_ident()
    sign()


def end() -> None:
    global _run_thread
    _run_thread = None


def silence(now: float | None = None) -> float:
    """Seconds the watch has seen run() make no sign: 0 while it waits in
    a call, before it starts and after it returned. For the one thread that
    watches."""
    global _seen, _quiet_since
    now = time.monotonic() if now is None else now
    if _run_thread is None or _waits != 0 or _signs != _seen:
        _seen = _signs
        _quiet_since = now
    return now - _quiet_since
