"""The client's side of HTTP/1.1: one keep-alive socket, with a deadline on
every operation.

The standard library's http.client would do, but it cannot bound a whole
exchange by one deadline (its timeout restarts with each read), parses
headers with the email package (a third of a small call's time here), and
reads a body into a new bytes object per chunk. This module writes a request
as one write (or one sendmsg of pieces, for a body with large arrays),
reads a reply with Content-Length, chunked, or ending with the connection
(framing as a node reads requests: _wire/http.py), refuses a body over the
caller's limit before reading it, and raises `Timeout`, `Closed`, `BadReply`
or `TooLarge`, which the transport turns into the package's errors with the
node's and the method's names. To a node on this host it goes over the
node's unix socket (`socket_path`), where a request's large arrays may go
through shared memory and a reply's come from it (_wire/shared_memory.py;
the connection's `exchange`).
"""

from __future__ import annotations

import math
import os
import select
import socket
import ssl
import time
from typing import Any

from .._wire import shared_memory
from .._wire.http import Reader

CHUNK = 64 * 1024  # what one recv asks for while reading the head
SOCKET_BUFFER = 4 << 20  # as the nodes (docs/protocol.md#connections)


class Timeout(Exception):
    """The deadline passed."""


class Closed(Exception):
    """The connection ended before the reply did; `received` bytes of the
    reply had come."""

    def __init__(self, reason: str, received: int) -> None:
        super().__init__(reason)
        self.received = received


class HandshakeFailed(Exception):
    """The TLS handshake failed: `verify` tells whether it was the node's
    certificate that this client refused."""

    def __init__(self, reason: str, verify: bool) -> None:
        super().__init__(reason)
        self.verify = verify


# The alerts a node sends when it refuses this client's certificate. In TLS
# 1.3 the client's side of the handshake ends before the node has checked
# it, so the refusal comes with the first read.
REFUSALS = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN",
            "CERTIFICATE_EXPIRED", "DECRYPT_ERROR")


def is_refusal(error: ssl.SSLError) -> bool:
    return any(alert in (error.reason or "") for alert in REFUSALS)


class BadReply(Exception):
    """What came back is not an HTTP reply this client can read."""


class TooLarge(Exception):
    """The reply's body is over the caller's limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the reply's body has {size} bytes, over this client's limit of {limit} "
                         "(max_reply_bytes)")


class Reply:
    """A reply: its status, its fields by lower-case name, its body."""

    __slots__ = ("status", "headers", "body", "segments")

    def __init__(self, status: int, headers: dict[str, str], body: Any,
                 segments: list[shared_memory.Arrival] | None = None) -> None:
        self.status = status
        self.headers = headers
        self.body = body  # bytes-like
        self.segments = segments  # the shared memory it brought, for its decoding

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Timeout()
    return left


class Connection(Reader):
    """One socket, non-blocking from its connect on: every wait is a poll()
    bounded by the call's deadline. (A socket with a Python timeout costs a
    poll and two fcntl calls around each operation; here a small call is a
    send, a poll and a recv.)"""

    def __init__(self, host: str, port: int, deadline: float,
                 tls: ssl.SSLContext | None = None, socket_path: str | None = None) -> None:
        super().__init__()
        # A socket.socket, or the ssl.SSLSocket over it once the handshake began.
        self.sock: Any
        self.exchange: shared_memory.Exchange | None = None
        if socket_path is not None:
            self.sock = shared_memory.connect_unix(socket_path, _remaining(deadline))
            self.exchange = shared_memory.Exchange()
        else:
            self.sock = self._open(host, port, deadline)
        self.sock.setblocking(False)
        self._poll = select.poll()
        self.tls = tls is not None and socket_path is None  # a unix socket never leaves the host
        if tls is not None and socket_path is None:
            self._handshake(tls, deadline)
        self._fds: list[int] = []  # descriptors that came (a unix socket's)
        self._lost = False  # more came than a message may bring
        self.reusable = True
        self.idle_since = time.monotonic()
        self._deadline = deadline  # of the exchange under way

    @staticmethod
    def _open(host: str, port: int, deadline: float) -> socket.socket:
        error: OSError | None = None
        for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            try:
                # Before connecting, so that the window scale the handshake
                # agrees allows the whole buffer.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(_remaining(deadline))
                sock.connect(address)
                return sock
            except socket.timeout:
                sock.close()
                raise Timeout() from None
            except OSError as e:
                sock.close()
                error = e
        raise error or OSError(f"no address for {host}")

    def _handshake(self, context: ssl.SSLContext, deadline: float) -> None:
        try:
            self.sock = context.wrap_socket(self.sock, do_handshake_on_connect=False)
            while True:
                try:
                    self.sock.do_handshake()
                    return
                except ssl.SSLWantReadError:
                    self._wait(select.POLLIN, deadline)
                except ssl.SSLWantWriteError:
                    self._wait(select.POLLOUT, deadline)
        except ssl.SSLCertVerificationError as e:
            self.sock.close()
            raise HandshakeFailed(e.verify_message or str(e), True) from None
        except (ssl.SSLError, ConnectionError) as e:
            self.sock.close()
            raise HandshakeFailed(getattr(e, "reason", None) or str(e), False) from None
        except Timeout:
            self.sock.close()
            raise

    def close(self) -> None:
        self.reusable = False
        if self.exchange is not None:
            self.exchange.close()
            for fd in self._fds:
                os.close(fd)
            self._fds.clear()
        self.sock.close()

    def looks_closed(self) -> bool:
        """Whether the peer has closed this idle connection (or sent bytes
        nobody asked for): then it must not carry a call."""
        if self.tls:  # no peeking through TLS: anything readable is a close
            self._poll.register(self.sock, select.POLLIN)
            return bool(self._poll.poll(0)) or self.sock.pending() > 0
        try:
            self.sock.recv(1, socket.MSG_PEEK)
            return True  # the end of the stream, or bytes nobody asked for
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _wait(self, events: int, deadline: float) -> None:
        """Waits until the socket is ready for `events`, or raises Timeout."""
        self._poll.register(self.sock, events)
        if not self._poll.poll(math.ceil(_remaining(deadline) * 1000)):
            raise Timeout()

    # --- Sending. ---------------------------------------------------------

    def send(self, pieces: list[Any], deadline: float) -> None:
        """Sends every byte of `pieces` (bytes-like, in order), gathered in
        one sendmsg where the kernel takes them all."""
        views = [memoryview(p).cast("B") for p in pieces]
        views = [v for v in views if v.nbytes]
        if self.tls:
            self._send_tls(views, deadline)
            return
        fd = self.exchange.descriptor() if self.exchange is not None else None
        while views:
            try:
                sent = shared_memory.send_with(self.sock, views[:1024], fd)  # IOV_MAX
                fd = None  # it went with the first bytes
            except BlockingIOError:
                self._wait(select.POLLOUT, deadline)
                continue
            while views and sent >= views[0].nbytes:
                sent -= views[0].nbytes
                views.pop(0)
            if sent:
                views[0] = views[0][sent:]

    def _send_tls(self, views: list[memoryview], deadline: float) -> None:
        """As send(), through TLS, which has no sendmsg: small pieces are
        joined into one record, a large one goes as it is."""
        if len(views) > 1 and sum(v.nbytes for v in views) <= CHUNK:
            views = [memoryview(b"".join(views))]
        for view in views:
            while view.nbytes:
                try:
                    sent = self.sock.send(view)
                except (ssl.SSLWantWriteError, BlockingIOError):
                    self._wait(select.POLLOUT, deadline)
                    continue
                except ssl.SSLWantReadError:
                    self._wait(select.POLLIN, deadline)
                    continue
                view = view[sent:]

    # --- Receiving: _wire.http's reader, over this socket. ---------------------

    def _recv(self, received: int) -> bytes:
        """Some bytes: waits first, as right after a request nothing is there
        yet (unless TLS holds decrypted bytes already); b"" at the end."""
        deadline = self._deadline
        while True:
            if not (self.tls and self.sock.pending()):
                self._wait(select.POLLIN, deadline)
            try:
                if self.exchange is not None:
                    scratch = bytearray(CHUNK)
                    count = self._receive_into(memoryview(scratch))
                    return bytes(scratch[:count])
                data: bytes = self.sock.recv(CHUNK)
                return data
            except (BlockingIOError, ssl.SSLWantReadError):
                continue
            except ssl.SSLWantWriteError:
                self._wait(select.POLLOUT, deadline)
                continue
            except ssl.SSLError as e:
                if received == 0 and is_refusal(e):
                    raise HandshakeFailed(e.reason, False) from None
                raise Closed(f"the TLS connection failed ({e.reason or e})", received) from None
            except (ConnectionResetError, ConnectionAbortedError) as e:
                raise Closed(f"the connection was reset ({e.strerror})", received) from None

    def _recv_into(self, view: memoryview, have: int, size: int) -> int:
        sock = self.sock
        while True:
            # Reading first: in a large body's middle, bytes are usually there.
            try:
                if self.exchange is not None:
                    return self._receive_into(view)
                count: int = sock.recv_into(view, len(view))
                return count
            except (BlockingIOError, ssl.SSLWantReadError):
                self._wait(select.POLLIN, self._deadline)
            except ssl.SSLWantWriteError:
                self._wait(select.POLLOUT, self._deadline)
            except ssl.SSLError as e:
                raise Closed(f"the TLS connection failed ({e.reason or e}) after {have} of the "
                             f"{size} bytes of the reply's body", 1 + have) from None
            except (ConnectionResetError, ConnectionAbortedError):
                return 0

    def _receive_into(self, view: memoryview) -> int:
        """recv_into over the unix socket, keeping the descriptors that come."""
        count, lost = shared_memory.receive_into(self.sock, view, self._fds)
        self._lost = self._lost or lost
        return count

    def _error_head_too_large(self, limit: int) -> Exception:
        return BadReply(f"the reply's head is longer than {limit} bytes, or is not HTTP")

    def _error_ended(self, received: int, have: int | None, size: int | None) -> Exception:
        if size is None:
            return Closed("the node closed the connection", received)
        return Closed(f"the connection closed after {have} of the {size} bytes of the reply's "
                      "body", received)

    def _error_malformed(self, what: str, text: bytes | str) -> Exception:
        if what == "field":
            return BadReply(f"the reply has a malformed header line {str(text)[:60]!r}")
        if what == "lengths":
            return BadReply("the reply has two different Content-Length headers")
        if what == "chunk line":
            return BadReply("a chunk header of the reply is too long")
        if what == "chunk size":
            return BadReply(f"the reply has a malformed chunk size {text!r}")
        return BadReply("a chunk of the reply does not end with CRLF")

    def _error_body_too_large(self, size: int, limit: int) -> Exception:
        return TooLarge(size, limit)

    def receive(self, deadline: float, max_body: int) -> Reply:
        """Reads one reply. Raises Timeout, Closed, BadReply or TooLarge; after
        any of them the connection must be closed."""
        self._deadline = deadline
        while True:
            status, headers = self._read_status_and_fields()
            if not 100 <= status < 200:  # an interim reply (100 Continue) is skipped
                break
        if headers.get("connection", "").lower() == "close":
            self.reusable = False
        body: Any
        if status in (204, 304):
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = self.read_chunked(max_body)
        elif "content-length" in headers:
            text = headers["content-length"]
            if not text.isdigit():
                raise BadReply(f"the reply's Content-Length is {text!r}")
            body = self.read_exact(int(text), max_body)
        else:
            self.reusable = False
            body = self._read_to_end(max_body)
        if self._extra:  # bytes nobody asked for: the connection is out of step
            self.reusable = False
        segments = None
        if self.exchange is not None:
            try:
                if self._lost:
                    self._lost = False
                    raise shared_memory.SegmentError("more descriptors came than a message may "
                                                     "bring")
                self.exchange.received(headers, self._fds, max_body)
            except shared_memory.SegmentError as e:
                self.reusable = False
                raise BadReply(f"the reply's shared memory: {e}") from None
            segments = self.exchange.segments()
        return Reply(status, headers, body, segments)

    def _read_status_and_fields(self) -> tuple[int, dict[str, str]]:
        head = self.read_head()
        if head is None:
            raise Closed("the node closed the connection", 0)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not (
            len(parts[1]) == 3 and parts[1].isdigit()
        ):
            raise BadReply(f"the reply is not HTTP/1.x: it starts with {bytes(head[:40])!r}")
        if parts[0] == "HTTP/1.0":
            self.reusable = False
        return int(parts[1]), self.fields(lines[1:])

    def _read_to_end(self, max_body: int) -> bytearray:
        body = bytearray(self._extra)
        self._extra = b""
        while True:
            try:
                data = self._recv(1)
            except Closed:  # a reset ends it too
                return body
            if not data:
                return body
            body += data
            if len(body) > max_body:
                raise TooLarge(len(body), max_body)
