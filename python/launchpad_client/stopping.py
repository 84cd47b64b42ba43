"""Stopping a whole program from outside it, as lp::stop() does inside.

Any node is asked at `POST /lp/v1/stop` (with the secret); the program then
stops as for lp::stop(): on_stop callbacks, run()s joined, calls drained
(docs/protocol.md#introspection).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _protocol as protocol

if TYPE_CHECKING:
    from .node import Node


def stop_program(node: Node) -> None:
    """Asks the program that `node` belongs to to stop."""
    reply = node._shared.transport.request("POST", protocol.PATH_STOP, [b"{}"],
                                           content_type=protocol.MEDIA_JSON,
                                           accept=protocol.MEDIA_JSON, timeout=node.timeout)
    node._body(reply, "")
