"""A Python client of programs built with Launchpad for C++, and the runtime
of their Python nodes.

Every node of a running program is an HTTP server (docs/protocol.md). This
package calls its methods from Python with their C++ types checked::

    import launchpad_client as lp

    prog = lp.attach("/tmp/lp-actor_learner-AbC123")   # the run directory
    prog["replay"].info()[0]["size"]
    q = prog["learner"].get_parameters()                # a numpy array, shape (25, 4)
    prog.stop()

    node = lp.connect("http://127.0.0.1:40123", secret="0f3c...")

and serves Python objects as nodes of such a program (docs/python_nodes.md):
their methods' type hints (`lp.float32`, `lp.Tensor[lp.float32]` ...) are
their types on the wire; `lp.stop()`, `lp.stop_requested()`,
`lp.heartbeat()` and `lp.metrics` are what a node's own code asks of its
program. See docs/python.md.

The names below are the whole public surface, with the modules metrics
(a node's own figures), hints and server (the width hints and NodeServer
under the paths earlier releases gave them) and runtime (a Python node's
process, which its host starts); the modules whose names start with an
underscore are the package's own, and may change.
"""

from ._client.node import Futures, Method, Node, connect
from ._client.program import Program, attach
from ._errors import (DeadlineExceeded, LaunchpadError, ProtocolError, RemoteError, ReplyTooLarge,
                      TransportError)
from ._node.host import stop, stop_requested
from ._node.progress import heartbeat
from ._node.server import NodeServer, caller_deadline
from ._packages import MissingPackageWarning, have_cbor, have_numpy
from ._protocol import VERSION as __version__
from ._run_directory import read_secret
from ._tls import tls_context
from ._wire.hints import (Json, Tensor, float32, float64, int8, int16, int32, int64, uint8, uint16,
                          uint32, uint64)
from . import metrics  # metrics.counter(name).add(n), .gauge(name).set(v), .series(name).record(v)

# In sections, each under its heading (tools/python_reference.py writes the
# reference so).
__all__ = [
    # Calling nodes.
    "attach", "connect", "Program", "Node", "Method", "Futures", "read_secret", "tls_context",
    # What goes wrong.
    "LaunchpadError", "RemoteError", "TransportError", "DeadlineExceeded", "ProtocolError",
    "ReplyTooLarge",
    # Types on the wire.
    "Json", "Tensor", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
    # Serving a Python object as a node, and what its code asks of its program.
    "NodeServer", "caller_deadline", "stop", "stop_requested", "heartbeat", "metrics",
    # The packages a fast path needs.
    "have_cbor", "have_numpy", "MissingPackageWarning",
]
