"""Stopping a whole program from outside it, as lp::stop() does inside.

Any node is asked at `POST /lp/v1/stop` (with the secret); the program then
stops as for lp::stop(): on_stop callbacks, run()s joined, calls drained
(docs/protocol.md#introspection).
"""

STOP_PATH = "/lp/v1/stop"


def stop_program(node):
    """Asks the program that `node` belongs to to stop."""
    reply = node._shared.transport.request("POST", STOP_PATH, [b"{}"], content_type="application/json",
                                           accept="application/json", timeout=node.timeout)
    node._body(reply, "")
