"""What a Python node's own code asks of its program, as a C++ node asks
`lp::stop()` and `lp::stop_requested()`: `launchpad_client.stop()` and
`launchpad_client.stop_requested()`. The runtime (main.py) connects them
to the node's host; outside a node they do nothing and say False.

The host is at the other end of a connected AF_UNIX stream socket (the
control socket: launchpad_client/runtime.py lists its lines, protocol.toml
spells them). One thread reads it: it hands
each reply to the request waiting for it, marks the program stopping at the
host's `stop`, and calls the runtime back at the host's `end` or when the
socket ends (the host is gone), which ends the node, so that no node
outlives its host.

A stop has one way in, as in C++, where every node of a process shares its
launch's stop: whoever asks (this node's code, a signal to its process, a
peer that refuses a call for stopping) tells the host, and the host's
`stop` reaches every Python node it hosts at the moment its C++ nodes see
theirs. The asker's own stop_requested() is true at once, as lp::stop()
makes it in C++.
"""

from __future__ import annotations

import queue
import socket
import sys
import threading
import time
from collections.abc import Callable

from .. import _protocol as protocol
from . import progress


# Seconds an `address` request waits for its reply. The host may answer only
# once that node serves, which may take a restart or a slow start.
ADDRESS_TIMEOUT = 60.0

_host: _Host | None = None  # set by the runtime
# A node without a host: the runtime's end, which a stop calls.
_end_alone: Callable[[bool], None] | None = None
_stopping = threading.Event()
# Called once each when the stop comes (on_stop), on a thread of their own.
_stop_handlers: list[Callable[[], None]] = []
_handlers_lock = threading.Lock()
# The host's `run`: every node of the program serves, so run() may call them.
_run_now = threading.Event()


class HostGone(LookupError):
    """The control socket ended: the host is gone, and the node stops."""


class _Host:
    def __init__(self, sock: socket.socket, on_end: Callable[[bool], None],
                 pending: bytes) -> None:
        self._sock = sock
        self._on_end = on_end
        self._pending = pending
        self._write_lock = threading.Lock()  # one line at a time, never two interleaved
        self._ask_lock = threading.Lock()  # one request in flight, so a reply is its
        self._replies: queue.Queue[str | None] = queue.Queue()
        self.lost = threading.Event()
        threading.Thread(target=self._read, name="lp-control", daemon=True).start()

    def write(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        with self._write_lock:
            self._sock.sendall(data)

    def _read(self) -> None:
        pending, chunk = b"", self._pending  # what came with the spec first
        try:
            while True:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._dispatch(line.decode("utf-8", "replace"))
                chunk = self._sock.recv(4096)
                if not chunk:
                    break
        except OSError:
            pass  # a reset is an end as well
        self.lost.set()
        self._replies.put(None)  # wakes a request waiting for its reply
        _mark_stopping()
        self._on_end(True)

    def _dispatch(self, line: str) -> None:
        # A line this node does not know is a later host's: it is passed over.
        if line.startswith(protocol.PYTHON_CONTROL_ADDRESS):
            self._replies.put(line)
        elif line == protocol.PYTHON_CONTROL_RUN:
            _run_now.set()
        elif line == protocol.PYTHON_CONTROL_STOP:
            _mark_stopping()
        elif line == protocol.PYTHON_CONTROL_END:
            self._on_end(False)

    def address(self, label: str, timeout: float) -> tuple[str, str | None]:
        with self._ask_lock:
            self._drop_late_replies()
            if self.lost.is_set():
                raise HostGone(f"no address for node {label!r}: the host is gone (the control "
                               "socket closed), and this node is stopping")
            try:
                self.write(f"{protocol.PYTHON_CONTROL_ADDRESS}{label}")
            except OSError as e:
                raise HostGone(f"no address for node {label!r}: cannot ask the host "
                               f"({e.strerror or e}); this node is stopping") from None
            return self._reply(label, time.monotonic() + timeout, timeout)

    def _drop_late_replies(self) -> None:
        # Replies to a request that gave up waiting: they are not this one's.
        while True:
            try:
                self._replies.get_nowait()
            except queue.Empty:
                return

    def _reply(self, label: str, give_up: float, timeout: float) -> tuple[str, str | None]:
        while True:
            try:
                line = self._replies.get(timeout=max(0.0, give_up - time.monotonic()))
            except queue.Empty:
                raise LookupError(f"the host did not answer the address request for node "
                                  f"{label!r} within {timeout:g} s") from None
            if line is None:
                raise HostGone(f"no address for node {label!r}: the host closed the control "
                               "socket, and this node is stopping")
            answered, _, rest = line[len(protocol.PYTHON_CONTROL_ADDRESS):].partition(" ")
            if answered != label:
                continue  # a late reply to a request that gave up
            no_address = protocol.PYTHON_CONTROL_NO_ADDRESS
            if rest == no_address.strip() or rest.startswith(no_address):
                reason = rest[len(no_address):].strip() or "the host gave no reason"
                raise LookupError(f"no address for node {label!r}: {reason}")
            url, _, socket_path = rest.strip().partition(" ")
            return url, socket_path or None


def connect(sock: socket.socket, on_end: Callable[[bool], None], pending: bytes = b"") -> None:
    """Makes `sock` (the control socket) this node's way to its host, and
    starts reading it, from `pending` (bytes read already). `on_end(lost)`
    runs on the reading thread at the host's `end` (lost False) and when
    the socket ends (lost True)."""
    global _host
    _host = _Host(sock, on_end, pending)


def host_lost() -> bool:
    """True once the control socket has ended."""
    return _host is not None and _host.lost.is_set()


def serve_alone(on_end: Callable[[bool], None]) -> None:
    """A node without a host (started by hand): a stop ends it, calling
    `on_end(False)`."""
    global _end_alone
    _end_alone = on_end


def connected() -> bool:
    """True in a node started by a host (LP_PYTHON_CONTROL_FD)."""
    return _host is not None


def wait_for_run(ended: threading.Event) -> bool:
    """Returns once the host says every node serves (at once, True,
    without a host), or `ended` is set first; True in the first case. A
    stop that came before does not keep run() from running, as in C++: it
    returns when it sees the stop."""
    if _host is None:
        return True
    while not (_run_now.wait(0.2) or ended.is_set()):
        pass
    return _run_now.is_set()


def tell(line: str) -> None:
    """Writes one line to the node's host (launchpad_client/runtime.py lists
    them)."""
    if _host is not None:
        try:
            _host.write(line)
        except OSError:
            pass  # the host is gone: the reading thread sees the end and stops the node


def address(label: str, timeout: float = ADDRESS_TIMEOUT) -> tuple[str, str | None]:
    """Where node `label` serves, as the host knows it now: (its URL, its
    unix socket where it has one on this host, else None). Raises
    LookupError (HostGone when the host is gone) with the host's reason."""
    if _host is None:
        raise LookupError("this process has no host to ask "
                          f"({protocol.ENVIRONMENT_PYTHON_CONTROL_FD} is not set)")
    if not label or any(c.isspace() for c in label):
        raise ValueError(f"{label!r} is not a node's label")
    return _host.address(label, timeout)


def stop() -> None:
    """Asks the whole program to stop, as lp::stop() does in a C++ node:
    stop_requested() is True from now on, here at once and in every other
    node once the host passes the stop on. Outside a Python node it does
    nothing."""
    _ask(protocol.PYTHON_CONTROL_STOP)


def follow_stop() -> None:
    """A peer refused a call because the program stops: this node stops
    too, as a C++ node does, without claiming the stop for its own (the
    host hears `follow`, not `stop`)."""
    _ask(protocol.PYTHON_CONTROL_FOLLOW)


def _ask(line: str) -> None:
    if _host is not None:
        _mark_stopping()
        tell(line)
    elif _end_alone is not None:
        _mark_stopping()
        _end_alone(False)
    # else: not in a node


def _mark_stopping() -> None:
    # The first stop calls the handlers, each once, on a thread of their own
    # (the control socket's reader must go on reading; a handler may block).
    with _handlers_lock:
        if _stopping.is_set():
            return
        _stopping.set()
        handlers = list(_stop_handlers)
        _stop_handlers.clear()
    if handlers:
        threading.Thread(target=_call_handlers, args=(handlers,), name="lp-stop-handlers",
                         daemon=True).start()


def _call_handlers(handlers: list[Callable[[], None]]) -> None:
    for handler in handlers:
        try:
            handler()
        except Exception as e:  # one handler's failure keeps no other from its call
            print(f"[lp] a stop handler ({handler!r}) raised {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)


def on_stop(handler: Callable[[], None]) -> None:
    """Calls `handler()` once when the program stops, on a thread of its
    own; at once (on this thread) if it stops already."""
    with _handlers_lock:
        if not _stopping.is_set():
            _stop_handlers.append(handler)
            return
    _call_handlers([handler])


def remove_on_stop(handler: Callable[[], None]) -> None:
    """Takes back a handler of on_stop() not called yet; nothing if none."""
    with _handlers_lock:
        if handler in _stop_handlers:
            _stop_handlers.remove(handler)


def stop_event() -> threading.Event:
    """The event a stop sets (stop_requested() reads it): a node's thread
    may wait on it."""
    return _stopping


def in_node() -> bool:
    """True in a Python node's process (started by a host, or alone)."""
    return _host is not None or _end_alone is not None


def stop_requested() -> bool:
    """True once the program stops, as lp::stop_requested() in C++: a run()
    loop should return then. From run(), a sign of progress too (its
    group's health_timeout). Outside a Python node, False."""
    progress.sign()
    return _stopping.is_set()
