"""The exceptions of the package, one per way a call can go wrong.

They mirror the C++ library's (docs/concepts.md#errors): a node that answered
with an error raises RemoteError; no answer at all raises TransportError (or
DeadlineExceeded, when the call ran out of time); an answer that is not the
protocol raises ProtocolError. Mistakes in the arguments are the built-in
TypeError and ValueError, raised before anything is sent.
"""

from __future__ import annotations


def _where(node: str | None, method: str | None) -> str:
    return f"{node}.{method}" if method else (node or "the node")


class LaunchpadError(Exception):
    """The base of every error this package raises for a call or an attach."""


class RemoteError(LaunchpadError):
    """The node answered with an error (docs/protocol.md#errors).

    `code` is the protocol's error code (`bad_request`, `unauthenticated`,
    `no_such_method`, `no_such_route`, `payload_too_large`,
    `unsupported_media_type`, `remote_exception`, `stopping`), `message` the
    node's explanation, `status` the HTTP status.
    """

    def __init__(self, node: str, method: str, code: str, message: str, status: int) -> None:
        self.node = node
        self.method = method
        self.code = code
        self.message = message
        self.status = status
        super().__init__(f"{_where(node, method)} failed ({code}, HTTP {status}): {message}")


class _NoAnswer(LaunchpadError):
    """What TransportError and ProtocolError hold: the node, the method and
    why there is no answer to give."""

    def __init__(self, node: str, method: str, reason: str) -> None:
        self.node = node
        self.method = method
        self.reason = reason
        super().__init__(f"{_where(node, method)}: {reason}")


class TransportError(_NoAnswer):
    """No reply came: the connection was refused, broke, or closed mid-reply.

    After a TransportError the method may or may not have run on the node.
    `node`, `method` and `reason` say where and why.
    """


class DeadlineExceeded(TransportError):
    """The call's timeout passed before its reply had come in whole.

    The method may still run on the node.
    """


class ProtocolError(_NoAnswer):
    """A reply came, but it is not what a Launchpad node sends: not HTTP, a
    Content-Type other than JSON or CBOR, a body that does not decode, or a
    value that is not `{"result": ...}` / `{"error": {...}}`. `node`,
    `method` and `reason` say where and what."""


class ReplyTooLarge(ProtocolError):
    """The reply's body is larger than the client accepts (`max_reply_bytes`).

    The client reads none of it: it stops at the headers and drops the
    connection.
    """
