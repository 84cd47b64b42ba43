"""The handles a Python node is given: typed clients of other nodes of its
program, connected on first use, that find their node again after it moved.

A handle's address comes from the node's host (host.address); without a
host (a node started by hand), from the run directory's nodes file; its
secret and TLS from the spec (spec.Credentials). A call
that finds no one there (the node restarted elsewhere) makes the next one
ask again; a call refused because the program stops makes this node stop
with it, as a C++ node does.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import _protocol as protocol
from .. import _run_directory as run_directory
from .._client.node import Futures, MethodSpec, Node
from .._errors import DeadlineExceeded, RemoteError, TransportError
from . import host, progress
from .spec import Credentials

ADDRESS_FILE_WAIT = 30.0  # seconds a node without a host waits for a peer in the nodes file


class Peer:
    """A handle of another node: its methods are this object's, sync, and
    `futures`' for concurrent.futures.Future objects, as a Node's."""

    def __init__(self, run_dir: str | None, label: str, credentials: Credentials) -> None:
        self._run_dir, self._label, self._credentials = run_dir, label, credentials
        self._node: Node | None = None
        self._lock = threading.Lock()

    def _connect(self) -> Node:
        with self._lock:
            if self._node is None:
                url, socket_path = self._address()
                self._node = Node(url, self._credentials.secret, label=self._label,
                                  tls=self._credentials.client_context(), socket_path=socket_path)
            return self._node

    def _address(self) -> tuple[str, str | None]:
        """(URL, unix socket on this host or None) of the node."""
        if host.connected():
            return host.address(self._label)
        run_dir = self._run_dir
        if not run_dir:
            raise LookupError(f"no address for node {self._label!r}: a node started by hand "
                              "finds it in its run directory's nodes file (the spec's "
                              f"\"{protocol.PYTHON_SPEC_RUN_DIR}\")")
        give_up = time.monotonic() + ADDRESS_FILE_WAIT
        while True:
            url = run_directory.node_addresses(run_dir).get(self._label)
            if url:
                return url, None
            if time.monotonic() > give_up:
                raise LookupError(f"no address for node {self._label!r} in {run_dir}/"
                                  f"{protocol.RUN_DIRECTORY_NODES} within {ADDRESS_FILE_WAIT:g} s")
            time.sleep(0.02)

    def _forget_if_gone(self, node: Node, error: BaseException | None) -> None:
        # A deadline says the node is slow, not gone: its address stands.
        if not isinstance(error, TransportError) or isinstance(error, DeadlineExceeded):
            return
        with self._lock:
            if self._node is node:
                self._node = None
        node.close()

    def _use(self, action: Callable[[Node], Any]) -> Any:
        # From run(), a call is a sign of progress, and alive while it waits.
        with progress.waiting:
            node = self._connect()
            try:
                return action(node)
            except TransportError as e:
                self._forget_if_gone(node, e)
                raise
            except RemoteError as e:
                _follow_if_stopping(e)
                raise

    def _submit_with(self, action: Callable[[Node], Any]) -> concurrent.futures.Future[Any]:
        progress.sign()
        node = self._connect()
        try:
            future: concurrent.futures.Future[Any] = action(node)
        except TransportError as e:
            self._forget_if_gone(node, e)
            raise

        def done(f: concurrent.futures.Future[Any]) -> None:
            if not f.cancelled():
                self._forget_if_gone(node, f.exception())
                _follow_if_stopping(f.exception())

        future.add_done_callback(done)
        return future

    def _submit(self, method: str, spec: MethodSpec | None, args: tuple[Any, ...],
                timeout: float | None, check: bool) -> concurrent.futures.Future[Any]:
        """Node._submit through this handle (Futures.call)."""
        return self._submit_with(lambda node: node._submit(method, spec, args, timeout, check))

    @property
    def futures(self) -> Futures:
        return Futures(self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._use(lambda node: getattr(node, name))
        return _PeerMethod(self, name) if callable(value) else value


_credentials: Credentials | None = None  # this node's, for peer()


def use_credentials(credentials: Credentials) -> None:
    """The credentials of the handles that peer() makes (the runtime's)."""
    global _credentials
    _credentials = credentials


def peer(label: str) -> Peer:
    """A handle of the node `label` of this node's program: for a Launchpad
    program's handles (launchpad.CourierClient), which its node's definition
    carries and which are made as it is unpickled."""
    if _credentials is None:
        raise RuntimeError(f"a handle of node {label!r} is used outside a node of its program; "
                           "handles reach their nodes from the nodes they were given to")
    return Peer(None, label, _credentials)


def _follow_if_stopping(error: BaseException | None) -> None:
    # A peer that refuses a call for stopping says that the program stops,
    # as a C++ node learns it from the same refusal.
    if isinstance(error, RemoteError) and error.code == protocol.ERROR_STOPPING:
        host.follow_stop()


class _PeerMethod:
    """A method of a peer, found by name on each call, so that a call after
    the node moved goes to where it is now."""

    def __init__(self, peer: Peer, name: str) -> None:
        self._peer, self._name = peer, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer._use(lambda node: getattr(node, self._name)(*args, **kwargs))

    def submit(self, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        return self._peer._submit_with(
            lambda node: getattr(node, self._name).submit(*args, **kwargs))
