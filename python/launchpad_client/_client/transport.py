"""Requests to one node over a pool of keep-alive connections.

A call takes an idle connection (or opens one), sends, reads the reply, and
gives the connection back if it can carry another call. Nodes close a
connection after 30 s idle (docs/protocol.md#connections), so the pool drops
ones idle for longer than IDLE_LIMIT, and ones the node has visibly closed.
As the C++ client does, a call is retried once, on a new connection, only
when a pooled connection turns out closed before any byte of the reply
came back: the node never saw that call.

To a node on this host (`socket_path`: its unix socket, where the launch
says it has one on this host), the connections are to that socket, and a
call's large arrays go through shared memory (_wire/shared_memory.py).
"""

from __future__ import annotations

import errno
import math
import ssl
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _protocol as protocol
from .._wire import codec
from .._errors import DeadlineExceeded, ProtocolError, ReplyTooLarge, TransportError
from .connection import CHUNK, BadReply, Closed, Connection, HandshakeFailed, Reply, Timeout, TooLarge

IDLE_LIMIT = 15.0  # seconds; nodes close idle connections after 30 s
FRESH = 0.1  # seconds idle under which a pooled connection is not checked
MAX_IDLE = 32  # idle connections kept per node

T = TypeVar("T")


def split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a node's URL, such as http://127.0.0.1:40123
    or https://10.0.0.2:40123."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(f"{url!r} is not a node's address, such as http://127.0.0.1:40123 "
                         "or https://10.0.0.2:40123")
    return parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def handshake_message(url: str, failure: HandshakeFailed) -> str:
    if failure.verify:
        return (f"{url} presented a certificate that is not this launch's ({failure}): is the "
                "address another launch's node, or are these another launch's TLS files?")
    return (f"the TLS handshake with {url} failed ({failure}): the node refuses a client that "
            f"does not present this launch's certificate (RUN_DIR/{protocol.RUN_DIRECTORY_CERTIFICATE} "
            f"and {protocol.RUN_DIRECTORY_KEY})")


def _close_all(connections: list[Connection]) -> None:
    for connection in connections:
        connection.close()


class Transport:
    """The connections to one node, and the requests over them."""

    def __init__(self, url: str, label: str, secret: str | None, max_reply_bytes: int,
                 tls: ssl.SSLContext | None = None, socket_path: str | None = None) -> None:
        self.url = url.rstrip("/")
        scheme, self.host, self.port = split_url(self.url)
        if scheme == "https" and tls is None:
            raise ValueError(f"{self.url} speaks TLS: give the launch's run directory (run_dir=), "
                             f"whose {protocol.RUN_DIRECTORY_CERTIFICATE} and {protocol.RUN_DIRECTORY_KEY} "
                             "this client presents, or "
                             "tls=launchpad_client.tls_context(ca, certificate, key)")
        self.tls = tls if scheme == "https" else None
        self.label = label
        self.max_reply_bytes = max_reply_bytes
        self.socket_path = socket_path
        host = f"[{self.host}]" if ":" in self.host else self.host
        auth = f"Authorization: Bearer {secret}\r\n" if secret else ""
        self._common = f"Host: {host}:{self.port}\r\n{auth}".encode("latin-1")
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        # A proxy dropped without close() (in a notebook, say) closes its
        # sockets when it is collected.
        weakref.finalize(self, _close_all, self._idle)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _acquire(self, deadline: float) -> tuple[Connection, bool]:
        with self._lock:
            while self._idle:
                connection = self._idle.pop()
                idle = time.monotonic() - connection.idle_since
                # A connection used a moment ago is taken as it is (a retry
                # covers a node that closed it); an older one is looked at.
                if idle < FRESH or (idle < IDLE_LIMIT and not connection.looks_closed()):
                    return connection, True
                connection.close()
        if self.socket_path is not None:
            try:
                return Connection(self.host, self.port, deadline, socket_path=self.socket_path), False
            except OSError:
                self.socket_path = None  # removed by hand, say: over TCP from now on
        return Connection(self.host, self.port, deadline, self.tls), False

    def _release(self, connection: Connection) -> None:
        if not connection.reusable:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE:
                self._idle.append(connection)
                return
        connection.close()

    def request(self, verb: str, path: str, pieces: Any = (), content_type: str | None = None,
                accept: str | None = None, timeout: float = 120.0, method: str = "") -> Reply:
        """Sends one request and returns its Reply. Raises TransportError,
        DeadlineExceeded, ProtocolError or ReplyTooLarge naming the node and
        `method`."""
        return self.read(verb, path, lambda reply: reply, pieces, content_type, accept, timeout,
                         method)

    def read(self, verb: str, path: str, read: Callable[[Reply], T], pieces: Any = (),
             content_type: str | None = None, accept: str | None = None,
             timeout: float = 120.0, method: str = "") -> T:
        """As request(), and returns what `read(reply)` makes of the reply:
        `read` runs before the connection goes back to the pool, while the
        shared memory the reply brought is this caller's alone."""
        deadline = time.monotonic() + timeout
        size = sum(memoryview(p).nbytes for p in pieces)
        head = [f"{verb} {path} HTTP/1.1\r\n".encode("latin-1"), self._common]
        if content_type:
            head.append(f"Content-Type: {content_type}\r\n".encode("latin-1"))
        if accept:
            head.append(f"Accept: {accept}\r\n".encode("latin-1"))
        if verb == "POST":
            # The node learns how long the caller waits (docs/protocol.md), so
            # that a method that waits (a replay's rate limiter) gives up then.
            head.append(f"{protocol.HEADER_DEADLINE}: {math.ceil(timeout * 1000)}\r\n".encode("latin-1"))
        joined = b"".join(head)

        def framed(connection: Connection) -> list[Any]:
            """The request on `connection`: on a unix socket, its large
            arrays in a segment where the node takes them."""
            body, end, length = pieces, joined, size
            if connection.exchange is not None:
                body = connection.exchange.pack(pieces, codec.arrays_of(pieces))
                length = sum(memoryview(p).nbytes for p in body)
                end += connection.exchange.head_lines().encode("latin-1")
            if verb == "POST":
                end += f"Content-Length: {length}\r\n".encode("latin-1")
            end += b"\r\n"
            if length and length + len(end) <= CHUNK:
                return [end + b"".join(body)]  # a small call is one write
            return [end, *body]

        for attempt in (1, 2):
            try:
                connection, reused = self._acquire(deadline)
            except Timeout:
                raise DeadlineExceeded(self.label, method,
                                       f"could not connect to {self.url} within {timeout:g} s") from None
            except HandshakeFailed as e:
                raise TransportError(self.label, method, handshake_message(self.url, e)) from None
            except OSError as e:
                reason = ("the connection was refused: is the node still running?"
                          if e.errno == errno.ECONNREFUSED else e.strerror or str(e))
                raise TransportError(self.label, method, f"{self.url}: {reason}") from None
            try:
                reply = self._exchange(connection, framed(connection), deadline)
            except Closed as e:
                connection.close()
                if e.received == 0 and reused and attempt == 1:
                    continue  # a pooled connection the node had closed
                raise TransportError(self.label, method, f"{self.url}: {e}") from None
            except Timeout:
                connection.close()
                raise DeadlineExceeded(self.label, method,
                                       f"no whole reply from {self.url} within {timeout:g} s") from None
            except HandshakeFailed as e:
                connection.close()
                raise TransportError(self.label, method, handshake_message(self.url, e)) from None
            except TooLarge as e:
                connection.close()
                raise ReplyTooLarge(self.label, method, str(e)) from None
            except BadReply as e:
                connection.close()
                raise ProtocolError(self.label, method,
                                    f"{e} (is {self.url} a Launchpad node?)") from None
            except ssl.SSLError as e:
                connection.close()
                if not reused:
                    # The node's refusal of this client's certificate: it ends
                    # the connection after the client's side of the handshake
                    # (TLS 1.3), and the first send may meet the end before a
                    # read meets the alert.
                    raise TransportError(self.label, method, handshake_message(
                        self.url, HandshakeFailed(e.reason or str(e), False))) from None
                raise TransportError(self.label, method,
                                     f"{self.url}: the TLS connection failed ({e.reason or e})") from None
            except OSError as e:
                connection.close()
                raise TransportError(self.label, method, f"{self.url}: {e.strerror or e}") from None
            except BaseException:
                connection.close()
                raise
            try:
                return read(reply)
            finally:
                self._release(connection)
        raise AssertionError("unreachable")

    def _exchange(self, connection: Connection, request: list[Any], deadline: float) -> Reply:
        sent = False
        try:
            connection.send(request, deadline)
            sent = True
        except (BrokenPipeError, ConnectionResetError) as sending:
            # The node may have answered before it stopped reading (413 for
            # a body over its limit, then closed): read what it said.
            connection.reusable = False
            try:
                return connection.receive(deadline, self.max_reply_bytes)
            except (Closed, BadReply, OSError):
                raise Closed(f"the connection broke while sending ({sending.strerror})", 0) from None
        except Timeout:
            raise
        finally:
            if connection.exchange is not None:
                connection.exchange.done(sent)  # its segment lent, or given away
        return connection.receive(deadline, self.max_reply_bytes)
