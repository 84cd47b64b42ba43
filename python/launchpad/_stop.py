"""Stopping, as Launchpad's nodes and launching scripts ask for it, on the
stop that a Python node's runtime already has (launchpad_client's
host.stop(), its stop event and its stop handlers): in a node, stop() stops
the whole program, wait_for_stop() and stop_event() wait for the stop, and
a registered handler is called once when it comes. In the launching script,
stop() stops the programs it launched, and a registered handler is called
once when one of them stops."""

from __future__ import annotations

import threading
from collections.abc import Callable

import launchpad_client
from launchpad_client._node import host, progress

from . import _launch


def _in_node(what: str) -> None:
    if not host.in_node():
        raise RuntimeError(f"launchpad.{what}() is for a node of a running program (the launching "
                           "script waits with the controller launch() returned: wait())")


def stop() -> None:
    """Stops the whole program: in a node, its program (as lp::stop() in a
    C++ node); in the launching script, every program it launched."""
    if host.in_node():
        launchpad_client.stop()
    else:
        _launch.stop_launched()


def wait_for_stop(timeout_secs: float | None = None) -> bool:
    """Waits until the program stops or `timeout_secs` pass (None: no
    bound); True once it stops. wait_for_stop(0) asks without waiting."""
    _in_node("wait_for_stop")
    progress.sign()  # a run() that asks shows progress, as stop_requested() does
    return host.stop_event().wait(timeout_secs)


def stop_event() -> threading.Event:
    """The event the program's stop sets (for .wait() or .is_set())."""
    _in_node("stop_event")
    return host.stop_event()


def register_stop_handler(handler: Callable[[], None]) -> None:
    """Calls `handler()` once when the program stops. In a node: on a
    thread of its own (at once if it stops already). In the launching
    script, as Launchpad allows: once a program it launched stops, on the
    thread that stops it (controller.stop(), lp.stop(), SIGINT, SIGTERM),
    or when it has ended (a node stopped it)."""
    if host.in_node():
        host.on_stop(handler)
    else:
        _launch.on_stop(handler)


def unregister_stop_handler(handler: Callable[[], None]) -> None:
    """Takes back a handler register_stop_handler() was given."""
    if host.in_node():
        host.remove_on_stop(handler)
    else:
        _launch.remove_on_stop(handler)
