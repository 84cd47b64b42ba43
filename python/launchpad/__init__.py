"""Launchpad's Python API on this library's runtime: a program written for
DeepMind's Launchpad (`import launchpad as lp`) runs on the C++ launcher
`lp-launchpad`, as a C++ program of Python nodes would
(docs/coming_from_launchpad.md says what runs so far and what does not yet)::

    program = lp.Program("consumer_producers")
    with program.group("producer"):
        producers = [program.add_node(lp.CourierNode(Producer)) for _ in range(2)]
    program.add_node(lp.CourierNode(Consumer, producers=producers), label="consumer")
    lp.launch(program, launch_type="local_mp")

The package's private rooms: _nodes.py (the nodes and their definitions),
_batching.py (batched_handler),
_program.py (Program and the handles add_node returns), _client.py (what a
handle is in the node it was given to), _launch.py (the description, and
lp-launchpad started on it).
"""

from __future__ import annotations

from launchpad_client import stop, stop_requested

from ._batching import batched_handler
from ._client import CourierClient
from ._launch import LaunchType, launch
from ._nodes import CourierNode, PyClassNode, PyNode
from ._program import CourierHandle, Program

__all__ = [
    # The program.
    "Program", "CourierNode", "PyClassNode", "PyNode", "CourierHandle",
    # In a node.
    "CourierClient", "batched_handler", "stop", "stop_requested",
    # The launch.
    "launch", "LaunchType",
]
