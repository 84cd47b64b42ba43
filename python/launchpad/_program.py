"""A Launchpad program: its nodes in groups, as Launchpad's Program keeps
them, and the handles add_node returns."""

from __future__ import annotations

import concurrent.futures
import contextlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from launchpad_client import Node

from ._client import CourierClient
from ._nodes import _Node

_NAME = re.compile(r"[A-Za-z0-9_.-]+")

# The labels of the handles pickled into the definition being written, on
# the thread that writes it (launch's edges of each node).
_pickled = threading.local()


def _check_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{what} {name!r} must be a non-empty run of letters, digits, '_', '-' "
                         "and '.' (it names the node's processes, its Slurm job and its "
                         "Kubernetes objects)")


class CourierHandle:
    """What add_node returns: give it to other nodes' constructors, where it
    arrives as a CourierClient of the node."""

    def __init__(self, label: str, program: Program) -> None:
        self._label, self._program = label, program

    @property
    def label(self) -> str:
        """The node's label in the launch: "<group>/<index>"."""
        return self._label

    def __repr__(self) -> str:
        return f"<launchpad.CourierHandle {self._label}>"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        recording = getattr(_pickled, "labels", None)
        if recording is not None:
            recording.append(self._label)
        return (CourierClient, (self._label,))

    def dereference(self) -> CourierClient:
        """A client of the node, from the process that launched its program
        under test_mt or test_mp (launch() returned once every node serves)."""
        launched = self._program._launched
        if launched is None:
            raise RuntimeError(f"{self._label} is dereferenced before its program "
                               f"{self._program.name} was launched (lp.launch(program, "
                               "launch_type='test_mt', test_case=self) first)")
        return CourierClient(self._label, _LaunchedPeer(launched._node(self._label)))


class _LaunchedPeer:
    """A node of a launched program as the launching process calls it:
    CourierClient's peer, as a node's peers.Peer is."""

    def __init__(self, node: Node) -> None:
        self._node = node

    def _use(self, action: Callable[[Node], Any]) -> Any:
        return action(self._node)

    def _submit(self, method: str, spec: None, args: tuple[Any, ...], timeout: float | None,
                check: bool) -> concurrent.futures.Future[Any]:
        return self._node._submit(method, spec, args, timeout, check)


class Program:
    """A Launchpad program: add_node(node, label) adds a node to the group
    `label` (a group of one, for a label used once) and returns its handle."""

    def __init__(self, name: str) -> None:
        _check_name(name, "a program name")
        self._name = name
        self._groups: dict[str, list[_Node]] = {}
        self._labels: list[tuple[str, _Node]] = []  # each node's launch label, in order
        self._current_group: str | None = None
        self._launched: Any = None  # launch()'s Controller, once launched

    @property
    def name(self) -> str:
        """The name the program was made with."""
        return self._name

    @property
    def groups(self) -> dict[str, list[_Node]]:
        """Each group's label and its nodes, in the order they were added."""
        return self._groups

    def add_node(self, node: _Node, label: str | None = None) -> CourierHandle:
        """Adds `node` to the group `label` (or the current group()); returns
        its handle."""
        if not isinstance(node, _Node):
            raise TypeError(f"add_node takes a launchpad node (CourierNode, PyClassNode, "
                            f"PyNode), not a {type(node).__name__}")
        if self._current_group is not None:
            if label and label != self._current_group:
                raise ValueError(f"add_node's label {label!r} is not the current group "
                                 f"{self._current_group!r}")
            label = self._current_group
        elif not label:
            raise ValueError("add_node needs a label outside a group()")
        _check_name(label, "a node label")
        nodes = self._groups.setdefault(label, [])
        launch_label = f"{label}/{len(nodes)}"
        nodes.append(node)
        self._labels.append((launch_label, node))
        node._handle = CourierHandle(launch_label, self)
        return node._handle

    @contextlib.contextmanager
    def group(self, label: str) -> Iterator[None]:
        """Within it, add_node adds to the group `label`."""
        _check_name(label, "a group label")
        if self._current_group is not None:
            raise ValueError("group() cannot be nested")
        self._current_group = label
        try:
            yield
        finally:
            self._current_group = None

    def _nodes(self) -> list[tuple[str, _Node]]:
        return list(self._labels)
