"""A handle as the node it was given to holds it: a client of the node it
names, whose methods are the node's, untyped as Courier's (values as
launchpad_client/_wire/untyped.py lets them cross), sync, and under
`.futures` returning concurrent.futures.Future objects."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from launchpad_client import ProtocolError
from launchpad_client._node import peers
from launchpad_client._wire import untyped


def shown(label: str, route: str) -> str:
    """How messages name the node at `route` of the process `label`: a
    colocation's node i as "<label>/i"."""
    return label + "".join("/" + i for i in route.split(".") if i)


class CourierClient:
    """A client of another node of the program: `client.method(*args)`
    waits for the result; `client.futures.method(*args)` does not."""

    def __init__(self, label: str, peer: Any = None, route: str = "") -> None:
        # label: the launch label of the process that serves the node;
        # route: its methods' prefix there ("i." for a colocation's node i).
        self._label, self._route = label, route
        self._name = shown(label, route)
        self._peer: Any = peer  # a peers.Peer in a node, made on first use
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<launchpad.CourierClient {self._name}>"

    def __reduce__(self) -> tuple[Any, tuple[str, None, str]]:
        return (CourierClient, (self._label, None, self._route))

    def _the_peer(self) -> Any:
        with self._lock:
            if self._peer is None:
                self._peer = peers.peer(self._label)
            return self._peer

    def _arguments(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        where = f"{self._name}.{method}"
        wire = [untyped.to_wire(a, f"argument {i + 1} of {where}") for i, a in enumerate(args)]
        if kwargs:
            wire.append(untyped.keywords_to_wire(kwargs, where))
        return tuple(wire)

    def _result(self, method: str, wire: Any) -> Any:
        try:
            return untyped.from_wire(wire, f"the result of {self._name}.{method}")
        except ValueError as e:
            raise ProtocolError(self._name, method, str(e)) from None

    def _call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        wire = self._arguments(method, args, kwargs)
        routed = self._route + method
        result = self._the_peer()._use(lambda node: node.call(routed, *wire, check=False))
        return self._result(method, result)

    def _submit(self, method: str, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> concurrent.futures.Future[Any]:
        wire = self._arguments(method, args, kwargs)
        sent = self._the_peer()._submit(self._route + method, None, wire, None, False)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def done(f: concurrent.futures.Future[Any]) -> None:
            if f.cancelled():
                future.cancel()
                future.set_running_or_notify_cancel()
                return
            error = f.exception()
            if error is not None:
                future.set_exception(error)
                return
            try:
                future.set_result(self._result(method, f.result()))
            except ProtocolError as e:
                future.set_exception(e)

        sent.add_done_callback(done)
        return future

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    @property
    def futures(self) -> _Futures:
        """The node's methods, each returning a concurrent.futures.Future."""
        return _Futures(self)


class _Futures:
    def __init__(self, client: CourierClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._client._submit(name, args, kwargs)
