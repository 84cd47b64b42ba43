"""Launchpad's Python API on this library's runtime: a program written for
DeepMind's Launchpad (`import launchpad as lp`) runs on the C++ launcher
`lp-launchpad`, as a C++ program of Python nodes would
(docs/coming_from_launchpad.md says what runs so far and what does not yet)::

    program = lp.Program("consumer_producers")
    with program.group("producer"):
        producers = [program.add_node(lp.CourierNode(Producer)) for _ in range(2)]
    program.add_node(lp.CourierNode(Consumer, producers=producers), label="consumer")
    lp.launch(program, launch_type="local_mp").wait()

The package's private rooms: _nodes.py (the nodes and their definitions),
_batching.py (batched_handler), _cpp.py (CppNode: a C++ program as a node),
_program.py (Program, its groups and the handles add_node returns),
_groups.py (a group's restarts, resources and environment), _client.py (what a
handle is in the node it was given to), _launch.py (the description,
lp-launchpad started on it, the Controller it returns), _flags.py (the
command line as Launchpad reads it), _stop.py (stopping).
"""

from __future__ import annotations

from launchpad_client import stop_requested

from ._batching import batched_handler
from ._client import CourierClient
from ._cpp import CppNode
from ._groups import PythonProcess, Resources
from ._launch import Controller, LaunchType, launch
from ._nodes import CourierNode, MultiThreadingColocation, PyClassNode, PyNode
from ._program import CourierHandle, Group, Program
from ._stop import (register_stop_handler, stop, stop_event, unregister_stop_handler,
                    wait_for_stop)

__all__ = [
    # The program.
    "Program", "CourierNode", "PyClassNode", "PyNode", "MultiThreadingColocation",
    "CppNode", "CourierHandle", "Group", "Resources",
    # In a node.
    "CourierClient", "batched_handler", "stop", "stop_requested", "wait_for_stop",
    "stop_event", "register_stop_handler", "unregister_stop_handler",
    # The launch.
    "launch", "LaunchType", "Controller", "PythonProcess",
]
