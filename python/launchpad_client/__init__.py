"""A Python client for programs built with Launchpad for C++.

Every node of a running program is an HTTP server (docs/protocol.md). This
package calls its methods from Python with their C++ types checked:

    import launchpad_client as lp

    prog = lp.attach("/tmp/lp-actor_learner-AbC123")   # the run directory
    prog["replay"].info()[0]["size"]
    q = prog["learner"].get_parameters()                # a numpy array, shape (25, 4)
    prog.stop()

    node = lp.connect("http://127.0.0.1:40123", secret="0f3c...")

See docs/python.md.
"""

from ._protocol import VERSION as __version__
from .errors import (DeadlineExceeded, LaunchpadError, ProtocolError, RemoteError, ReplyTooLarge,
                     TransportError)
from .hints import (Json, Tensor, float32, float64, int8, int16, int32, int64, uint8, uint16,
                    uint32, uint64)
from .node import Method, Node, connect
from .node_context import stop, stop_requested
from .optional_packages import MissingPackageWarning, have_cbor, have_numpy
from .progress import heartbeat
from .program import Program, attach
from .run_directory import read_secret
from .tls import tls_context
from . import metrics  # metrics.counter(name).add(n), .gauge(name).set(v), .series(name).record(v)

# In sections, each under its heading (tools/python_reference.py writes the
# reference so).
__all__ = [
    # Calling nodes.
    "attach", "connect", "Program", "Node", "Method", "read_secret", "tls_context",
    # What goes wrong.
    "LaunchpadError", "RemoteError", "TransportError", "DeadlineExceeded", "ProtocolError",
    "ReplyTooLarge",
    # Types on the wire.
    "Json", "Tensor", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
    # What a Python node's code asks of its program.
    "stop", "stop_requested", "heartbeat", "metrics",
    # The packages a fast path needs.
    "have_cbor", "have_numpy", "MissingPackageWarning",
]
