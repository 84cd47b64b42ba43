"""How a Python node's process tunes glibc's malloc, as a C++ node's does
(include/launchpad/detail/util/malloc_tuning.hpp), and gives back what the
tuning keeps once a load has gone.

A 4 MB body's blocks stay the process's between calls, not fresh pages from
the kernel for each: blocks up to 64 MiB stay in the heap, and free memory
goes back only past 128 MiB. Kept for good, that memory would follow the
node's peak load, each connection's thread allocating from one of up to 8
arenas per core. A C++ node gives it back when the threads of a load retire,
2 s after their last call; here a connection keeps its thread while it is
open, and a C++ client keeps its idle connections. So a wave of departures
starts when a connection's thread ends and when the node has had no call of
a method for 2 s: the trim threshold drops to glibc's default while the
wave lasts (what an ending thread frees then, and one block of 64 KiB it
frees on purpose, trims the top of its arena), and 0.2 s after the last
departure the free pages inside every arena go back (malloc_trim) and large
blocks are kept again.

The host asks for it (LP_TUNE_MALLOC=1 in the environment) unless the launch
has --lp_system_malloc; setting MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_
or GLIBC_TUNABLES leaves malloc to the user, as in C++. Elsewhere than glibc,
nothing happens.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

from .. import _protocol as protocol

_M_TRIM_THRESHOLD = -1  # glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
_KEPT_MMAP_THRESHOLD = 64 << 20
_KEPT_TRIM_THRESHOLD = 128 << 20
_RETURNING_TRIM_THRESHOLD = 128 << 10  # glibc's default
# As long as a C++ node's pool thread waits for work before it retires.
_QUIET_S = 2.0
# A wave of departures (threads that ended, a quiet node) is over once none
# has come for this long (an ended thread is gone by then); a wave that goes
# on is given back at least this often.
_SETTLED_S = 0.2
_LONGEST_WAIT_S = 2.0

_libc: ctypes.CDLL | None = None  # set once the process is tuned
_lock = threading.Lock()
_returning = False  # a wave is under way: the threshold is lowered
_departures = 0
_first_departure = _last_departure = 0.0
_called = threading.Event()  # a call came since the node was last quiet
_last_call = 0.0
returns = 0  # how often the process has given its free memory back


def keep_large_blocks() -> None:
    """Tunes malloc as above, once, if the host asked and the user did not."""
    global _libc
    if _libc is not None or os.environ.get(protocol.ENVIRONMENT_TUNE_MALLOC) != "1":
        return
    if any(name in os.environ
           for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")):
        return
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return  # not glibc
    mallopt.argtypes, malloc_trim.argtypes = [ctypes.c_int, ctypes.c_int], [ctypes.c_size_t]
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    mallopt(_M_MMAP_THRESHOLD, _KEPT_MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _KEPT_TRIM_THRESHOLD)
    _libc = libc
    threading.Thread(target=_watch_quiet, args=(libc,), name="lp-malloc-quiet", daemon=True).start()


def call_served() -> None:
    """Called by the server after each call of a method (not the launcher's
    polls of metrics and health, which come every second); nothing unless
    tuned."""
    global _last_call
    if _libc is None:
        return
    _last_call = time.monotonic()
    if not _called.is_set():
        _called.set()


def thread_ended() -> None:
    """Called on a connection's thread once it has dropped what it held;
    nothing unless keep_large_blocks tuned the process."""
    libc = _libc
    if libc is None:
        return
    _departure(libc)
    # malloc_trim leaves the free top of a thread's arena alone: glibc trims it
    # only when a block of 64 KiB or more is freed into that arena while the
    # top is past the trim threshold. This thread's frees as it ends do that
    # under the lowered threshold, and one such block now, whatever they are.
    libc.free(libc.malloc(64 << 10))


def _watch_quiet(libc: ctypes.CDLL) -> None:
    """Waits for calls, then for 2 s without one; a departure then. It
    sleeps while the node has no calls."""
    while True:
        _called.wait()
        while (wait := _last_call + _QUIET_S - time.monotonic()) > 0:
            time.sleep(wait)
        _called.clear()
        _departure(libc)


def _departure(libc: ctypes.CDLL) -> None:
    """Starts a wave of departures, or makes the one under way last."""
    global _returning, _departures, _first_departure, _last_departure
    with _lock:
        _last_departure = time.monotonic()
        _departures += 1
        if _returning:
            return
        _first_departure = _last_departure
        try:
            threading.Thread(target=_give_back, args=(libc,), name="lp-give-back",
                             daemon=True).start()
        except RuntimeError:
            return  # no thread to spare: this wave's memory waits for a later one
        _returning = True
        libc.mallopt(_M_TRIM_THRESHOLD, _RETURNING_TRIM_THRESHOLD)


def _give_back(libc: ctypes.CDLL) -> None:
    """On a thread of its own, once the wave has settled: the free pages inside
    every arena go back, and large blocks are kept again; first again for
    departures that came meanwhile."""
    global _returning, _first_departure, returns
    while True:
        with _lock:
            due = min(_last_departure + _SETTLED_S, _first_departure + _LONGEST_WAIT_S)
            seen = _departures
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
            continue
        libc.malloc_trim(0)
        with _lock:
            returns += 1
            if _departures == seen:
                libc.mallopt(_M_TRIM_THRESHOLD, _KEPT_TRIM_THRESHOLD)
                _returning = False
                return
            _first_departure = time.monotonic()
