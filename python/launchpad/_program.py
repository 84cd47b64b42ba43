"""A Launchpad program: its nodes in groups, as Launchpad's Program keeps
them, the groups' settings, and the handles add_node returns."""

from __future__ import annotations

import concurrent.futures
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from launchpad_client import Node

from ._client import CourierClient, shown
from ._groups import GroupSettings, Resources, check_env
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
    arrives as a CourierClient of the node. A node of a
    MultiThreadingColocation has one from the colocation's add_node on; it
    names a node once the colocation is added to its program."""

    def __init__(self, node: _Node) -> None:
        self._node = node

    def _where(self) -> tuple[str, str, Program]:
        # The launch label of the process that serves the node, the prefix
        # of its methods there ("i." for the colocation's node i; nested,
        # "i.j."), and its program.
        route, node = "", self._node
        while node._colocation is not None:
            route = f"{node._index}.{route}"
            node = node._colocation
        if node._program is None or node._launch_label is None:
            raise RuntimeError("a handle of a node in a MultiThreadingColocation is used before "
                               "the colocation was added to its program: "
                               "program.add_node(colocation, label=...) first")
        return node._launch_label, route, node._program

    @property
    def label(self) -> str:
        """The node's label in the launch: "<group>/<index>" (a colocated
        node's: its colocation's, then "/<its index there>")."""
        launch_label, route, _ = self._where()
        return shown(launch_label, route)

    def __repr__(self) -> str:
        try:
            return f"<launchpad.CourierHandle {self.label}>"
        except RuntimeError:
            return "<launchpad.CourierHandle of a colocated node not added yet>"

    def __reduce__(self) -> tuple[Any, tuple[str, None, str]]:
        launch_label, route, _ = self._where()
        recording = getattr(_pickled, "labels", None)
        if recording is not None:
            recording.append(launch_label)
        return (CourierClient, (launch_label, None, route))

    def dereference(self) -> CourierClient:
        """A client of the node, from the process that launched its program
        under test_mt or test_mp (launch() returned once every node serves)."""
        launch_label, route, program = self._where()
        launched = program._launched
        if launched is None:
            raise RuntimeError(f"{shown(launch_label, route)} is dereferenced before its "
                               f"program {program.name} was launched (lp.launch(program, "
                               "launch_type='test_mt', test_case=self) first)")
        return CourierClient(launch_label, _LaunchedPeer(launched._node(launch_label)), route)


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
        self._settings: dict[str, GroupSettings] = {}  # by group label, as Group sets them
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
        if node._colocation is not None:
            raise ValueError(f"this {type(node).__name__} runs in a MultiThreadingColocation: "
                             "add the colocation to the program, not its nodes")
        if node._program is not None:
            raise ValueError(f"this {type(node).__name__} is {node._launch_label} of program "
                             f"{node._program.name} already (make another node to run it twice)")
        nodes = self._groups.setdefault(label, [])
        launch_label = f"{label}/{len(nodes)}"
        nodes.append(node)
        self._labels.append((launch_label, node))
        node._program, node._launch_label = self, launch_label
        node._handle = CourierHandle(node)
        return node._handle

    def group(self, label: str) -> Group:
        """The group `label`: within `with program.group(label):`, add_node
        adds to it, as in Launchpad; its settings chain, as the C++ API's
        lp::node_group's do::

            program.group("actors").restart_on_failure(3).env({"OMP_NUM_THREADS": "1"})
            with program.group("learner").resources(lp.Resources(cpus=4, gpus=1)):
                program.add_node(lp.CourierNode(Learner))
        """
        _check_name(label, "a group label")
        return Group(self, label)

    def _nodes(self) -> list[tuple[str, _Node]]:
        return list(self._labels)

    def _described_groups(self, extra_env: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
        # The description's groups: those with settings, or an env of
        # local_resources'; each must hold a node.
        described = {}
        for label in sorted(set(self._settings) | set(extra_env)):
            if label not in self._groups:
                raise ValueError(f"group {label!r} of program {self._name} has settings but no "
                                 f"node (its groups: {', '.join(self._groups) or 'none'}): add "
                                 f"a node with label={label!r}, or drop them")
            entry = self._settings.get(label, GroupSettings()).described(
                extra_env.get(label, {}))
            if entry:
                described[label] = entry
        return described


class Group:
    """A group of a Program, as program.group(label) returns it: a context
    manager in which add_node adds to the group, and the group's settings
    (each returns the group, to chain them)."""

    def __init__(self, program: Program, label: str) -> None:
        self._program, self._label = program, label

    @property
    def label(self) -> str:
        """The group's label."""
        return self._label

    def __enter__(self) -> Group:
        if self._program._current_group is not None:
            raise ValueError("group() cannot be nested")
        self._program._current_group = self._label
        return self

    def __exit__(self, *exc: object) -> None:
        self._program._current_group = None

    def _settings(self) -> GroupSettings:
        return self._program._settings.setdefault(self._label, GroupSettings())

    def restart_on_failure(self, max_restarts: int, backoff: float = 0.2) -> Group:
        """When a node of this group fails (its process exits non-zero or is
        killed), starts it again, at most `max_restarts` times, `backoff`
        seconds later and twice as long each time after. Applies under
        local_mp, test_mp, Slurm and Kubernetes; under local_mt and test_mt,
        as for a C++ program, a failure stops the program."""
        if not isinstance(max_restarts, int) or isinstance(max_restarts, bool) or \
                max_restarts < 0:
            raise ValueError(f"group {self._label!r}: restart_on_failure takes a count of 0 or "
                             f"more, not {max_restarts!r}")
        if not isinstance(backoff, (int, float)) or isinstance(backoff, bool) or backoff < 0:
            raise ValueError(f"group {self._label!r}: restart_on_failure's backoff is seconds, "
                             f"0 or more, not {backoff!r}")
        settings = self._settings()
        settings.max_restarts, settings.restart_backoff_ms = max_restarts, round(backoff * 1000)
        return self

    def resources(self, needs: Resources) -> Group:
        """What each process of this group asks (lp.Resources): Slurm and
        Kubernetes allocate it; local_mp pins cores and hands out GPUs."""
        if not isinstance(needs, Resources):
            raise TypeError(f"group {self._label!r}: resources takes an lp.Resources(cpus=, "
                            f"memory_mb=, gpus=), not a {type(needs).__name__}")
        self._settings().resources = needs
        return self

    def env(self, variables: Mapping[str, str]) -> Group:
        """Environment variables added to each process of this group (its
        nodes' Python processes), under every launch."""
        self._settings().env.update(check_env(self._label, variables))
        return self
