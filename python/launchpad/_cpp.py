"""lp.CppNode: a node of a C++ program built with the library, run as a node
of a Launchpad program (docs/coming_from_launchpad.md, "Calling a C++ node").

The launcher (lp-launchpad) runs it as it runs a node process of a C++
program under local_mp: the executable, started in its node-process mode,
builds its own graph and runs only the node named, with the launch's
secret and settings (src/lp_launchpad.cpp, detail/host/executable_node.hpp).
Its handle arrives in the other nodes as a CourierClient that calls that
process directly, on its unix socket on one host, as it calls a Python
node. Its process is a node of the launch: its own status line, its
failure the launch's, restarted by its group's policy under local_mp.

Its graph holds none of this program's nodes, so the C++ node must take no
handles of its own program's other nodes: CppNode reads the C++ program's
graph (`--lp_graph=json`) when it is made, and refuses such a node there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

from launchpad_client import _protocol as protocol

from ._nodes import _Node

_GRAPH_TIMEOUT = 60.0  # seconds for the C++ program to print its graph


class CppNode(_Node):
    """The node `node` (a label; by default the program's only node) of the
    C++ program `executable` (built with the library), started with `args`
    (its own command-line arguments, strings)::

        calculator = program.add_node(lp.CppNode("./calculator"), label="calculator")
        program.add_node(lp.PyNode(use, calculator), label="user")

    Calls take positional arguments, checked against the C++ types by the
    node (a wrong one reaches the caller as a RemoteError naming it)."""

    kind = "cpp"

    def __init__(self, executable: str | os.PathLike[str], *args: str, node: str | None = None,
                 startup_timeout: float | None = None) -> None:
        # startup_timeout: taken as before, unused: the launch waits for the
        # node as for any node process.
        del startup_timeout
        path = _executable(executable)
        for i, arg in enumerate(args):
            if not isinstance(arg, str):
                raise TypeError(f"CppNode's argument {i + 1} is a {type(arg).__name__}: the C++ "
                                "program's arguments are its command line, strings")
            if arg.startswith("--lp_"):
                raise ValueError(f"CppNode runs {path} as a node of the Launchpad program's "
                                 f"launch, with its flags; leave {arg!r} out (give it to "
                                 "launch(), lp_flags=...)")
        key = protocol
        nodes = _graph(path, args)
        labels = [n[key.GRAPH_JSON_LABEL] for n in nodes]
        if not labels:
            raise ValueError(f"{path} has no node to run")
        if node is None and len(labels) != 1:
            raise ValueError(f"{path} has the nodes {', '.join(labels)}: name the one to run, "
                             "CppNode(executable, node=LABEL)")
        if node is not None and node not in labels:
            raise ValueError(f"{path} has no node {node!r}; its nodes: {', '.join(labels)}")
        chosen = nodes[labels.index(node if node is not None else labels[0])]
        edges = chosen[key.GRAPH_JSON_EDGES]
        if edges:
            raise ValueError(
                f"node {chosen[key.GRAPH_JSON_LABEL]} of {path} takes handles of "
                f"{', '.join(edges)}, "
                "which do not run in a Launchpad program: a CppNode runs one node of a C++ "
                "program, alone (its process builds its own graph, whose other nodes are not "
                "this launch's). Run a node that takes no handles, or launch that C++ "
                "program itself and call it with launchpad_client.attach()")
        self._place()
        self.executable, self.args = path, tuple(args)
        self.node = str(chosen[key.GRAPH_JSON_LABEL])
        self._service = str(chosen[key.GRAPH_JSON_SERVICE])
        self._has_run = bool(chosen[key.GRAPH_JSON_HAS_RUN])

    @property
    def definition(self) -> Any:  # type: ignore[override]
        """None to build in Python: raises TypeError (its process is the C++
        program)."""
        raise TypeError("a CppNode has no Python definition: its process is the C++ program "
                        "(it cannot run in a MultiThreadingColocation)")

    @property
    def service(self) -> str:
        """The name the launch shows for the node: its C++ service's."""
        return self._service

    @property
    def has_run(self) -> bool:
        """Whether the C++ node has a run(), which its process calls."""
        return self._has_run


def _executable(given: str | os.PathLike[str]) -> str:
    """The absolute path of `given` (a path, or a name on PATH), checked in
    the launching script, where a mistake is cheapest to see."""
    name = os.fspath(given)
    found = shutil.which(name) if os.sep not in name else name
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise FileNotFoundError(f"CppNode: {name!r} is not an executable file (give the path "
                                "of a C++ program built with the library, or a name on PATH)")
    return os.path.abspath(found)


def _graph(path: str, args: tuple[str, ...]) -> list[dict[str, Any]]:
    """The C++ program's nodes, as its graph says: their labels, services,
    run()s and handles."""
    flag = f"--lp_graph={protocol.GRAPH_JSON_FORMAT}"
    try:
        done = subprocess.run([path, *args, flag], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=_GRAPH_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"CppNode: {path} did not print its graph ({flag}) within "
                           f"{_GRAPH_TIMEOUT:g} s") from e
    try:
        nodes = json.loads(done.stdout)[protocol.GRAPH_JSON_NODES]
        if done.returncode == 0 and isinstance(nodes, list):
            return nodes
    except (ValueError, TypeError, KeyError):
        pass
    said = done.stderr.decode(errors="replace").strip()
    raise ValueError(f"CppNode: {' '.join([path, *args, flag])} exited with status "
                     f"{done.returncode} without printing its graph: is it a program built "
                     "with the library (lp::launch), of this version?" +
                     (f" It said: {said[-500:]}" if said else ""))
