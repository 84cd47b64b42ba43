"""HTTP/1.1 over one keep-alive socket, with a deadline on every operation.

The standard library's http.client would do, but it cannot bound a whole
exchange by one deadline (its timeout restarts with each read), parses
headers with the email package (a third of a small call's time here), and
reads a body into a new bytes object per chunk. This module writes a request
as one write (or one sendmsg of pieces, for a body with large arrays),
reads a reply with Content-Length, chunked, or ending with the connection,
refuses a body over the caller's limit before reading it, and raises
`Timeout`, `Closed`, `BadReply` or `TooLarge`, which the node layer turns
into the package's errors with the node's and the method's names.
"""

import math
import select
import socket
import ssl
import time

MAX_HEAD = 64 * 1024  # a reply's status line and headers
CHUNK = 64 * 1024  # what one recv asks for while reading the head
SOCKET_BUFFER = 4 << 20  # as the nodes (docs/protocol.md#connections)


class Timeout(Exception):
    """The deadline passed."""


class Closed(Exception):
    """The connection ended before the reply did; `received` bytes of the
    reply had come."""

    def __init__(self, reason, received):
        super().__init__(reason)
        self.received = received


class HandshakeFailed(Exception):
    """The TLS handshake failed: `verify` tells whether it was the node's
    certificate that this client refused."""

    def __init__(self, reason, verify):
        super().__init__(reason)
        self.verify = verify


# The alerts a node sends when it refuses this client's certificate. In TLS
# 1.3 the client's side of the handshake ends before the node has checked
# it, so the refusal comes with the first read.
REFUSALS = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN",
            "CERTIFICATE_EXPIRED", "DECRYPT_ERROR")


def is_refusal(error):
    return any(alert in (error.reason or "") for alert in REFUSALS)


class BadReply(Exception):
    """What came back is not an HTTP reply this client can read."""


class TooLarge(Exception):
    def __init__(self, size, limit):
        super().__init__(f"the reply's body has {size} bytes, over this client's limit of {limit} "
                         "(max_reply_bytes)")


class Reply:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body  # a bytearray

    @property
    def content_type(self):
        return self.headers.get("content-type", "")


def _remaining(deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise Timeout()
    return left


class Connection:
    """One socket, non-blocking from its connect on: every wait is a poll()
    bounded by the call's deadline. (A socket with a Python timeout costs a
    poll and two fcntl calls around each operation; here a small call is a
    send, a poll and a recv.)"""

    def __init__(self, host, port, deadline, tls=None):
        self.sock = self._open(host, port, deadline)
        self.sock.setblocking(False)
        self._poll = select.poll()
        self.tls = tls is not None
        if self.tls:
            self._handshake(tls, deadline)
        self.reusable = True
        self.idle_since = time.monotonic()
        self._extra = b""  # bytes read past the last reply's head, not yet used

    @staticmethod
    def _open(host, port, deadline):
        error = None
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

    def _handshake(self, context, deadline):
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

    def close(self):
        self.reusable = False
        self.sock.close()

    def looks_closed(self):
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

    def _wait(self, events, deadline):
        """Waits until the socket is ready for `events`, or raises Timeout."""
        self._poll.register(self.sock, events)
        if not self._poll.poll(math.ceil(_remaining(deadline) * 1000)):
            raise Timeout()

    # --- Sending. ---------------------------------------------------------

    def send(self, pieces, deadline):
        """Sends every byte of `pieces` (bytes-like, in order), gathered in
        one sendmsg where the kernel takes them all."""
        views = [memoryview(p).cast("B") for p in pieces]
        views = [v for v in views if v.nbytes]
        if self.tls:
            self._send_tls(views, deadline)
            return
        while views:
            try:
                sent = self.sock.sendmsg(views[:1024])  # IOV_MAX
            except BlockingIOError:
                self._wait(select.POLLOUT, deadline)
                continue
            while views and sent >= views[0].nbytes:
                sent -= views[0].nbytes
                views.pop(0)
            if sent:
                views[0] = views[0][sent:]

    def _send_tls(self, views, deadline):
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

    # --- Receiving. -------------------------------------------------------

    def _recv(self, deadline, received):
        """Some bytes: waits first, as right after a request nothing is there
        yet (unless TLS holds decrypted bytes already)."""
        while True:
            if not (self.tls and self.sock.pending()):
                self._wait(select.POLLIN, deadline)
            try:
                data = self.sock.recv(CHUNK)
                break
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
        if not data:
            raise Closed("the node closed the connection", received)
        return data

    def receive(self, deadline, max_body):
        """Reads one reply. Raises Timeout, Closed, BadReply or TooLarge; after
        any of them the connection must be closed."""
        while True:
            status, headers = self._read_head(deadline)
            if not 100 <= status < 200:  # an interim reply (100 Continue) is skipped
                break
        if headers.get("connection", "").lower() == "close":
            self.reusable = False
        if status in (204, 304):
            body = bytearray()
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = self._read_chunked(deadline, max_body)
        elif "content-length" in headers:
            text = headers["content-length"]
            if not text.isdigit():
                raise BadReply(f"the reply's Content-Length is {text!r}")
            body = self._read_exact(int(text), deadline, max_body)
        else:
            self.reusable = False
            body = self._read_to_end(deadline, max_body)
        if self._extra:  # bytes nobody asked for: the connection is out of step
            self.reusable = False
        return Reply(status, headers, body)

    def _read_head(self, deadline):
        buffer = self._extra
        self._extra = b""
        received = len(buffer)
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(buffer) > MAX_HEAD:
                raise BadReply(f"the reply's head is longer than {MAX_HEAD} bytes, or is not HTTP")
            data = self._recv(deadline, received)
            received += len(data)
            buffer += data
        head, self._extra = buffer[:end], buffer[end + 4:]
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not (
            len(parts[1]) == 3 and parts[1].isdigit()
        ):
            raise BadReply(f"the reply is not HTTP/1.x: it starts with {bytes(head[:40])!r}")
        if parts[0] == "HTTP/1.0":
            self.reusable = False
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise BadReply(f"the reply has a malformed header line {line[:60]!r}")
            name = name.strip().lower()
            value = value.strip()
            if name == "content-length" and headers.get(name, value) != value:
                raise BadReply("the reply has two different Content-Length headers")
            headers[name] = value
        return int(parts[1]), headers

    def _read_exact(self, size, deadline, max_body):
        if size > max_body:
            raise TooLarge(size, max_body)
        body = bytearray(size)
        have = min(size, len(self._extra))
        body[:have] = self._extra[:have]
        self._extra = self._extra[have:]
        view = memoryview(body)
        sock = self.sock
        while have < size:
            # Reading first: in a large body's middle, bytes are usually there.
            try:
                count = sock.recv_into(view[have:], size - have)
            except (BlockingIOError, ssl.SSLWantReadError):
                self._wait(select.POLLIN, deadline)
                continue
            except ssl.SSLWantWriteError:
                self._wait(select.POLLOUT, deadline)
                continue
            except ssl.SSLError as e:
                raise Closed(f"the TLS connection failed ({e.reason or e}) after {have} of the "
                             f"{size} bytes of the reply's body", 1 + have) from None
            except (ConnectionResetError, ConnectionAbortedError):
                count = 0
            if not count:
                raise Closed(f"the connection closed after {have} of the {size} bytes of the "
                             "reply's body", 1 + have)
            have += count
        return body

    def _read_line(self, deadline, limit=4096):
        buffer = self._extra
        while b"\r\n" not in buffer:
            if len(buffer) > limit:
                raise BadReply("a chunk header of the reply is too long")
            buffer += self._recv(deadline, 1)
        line, _, self._extra = buffer.partition(b"\r\n")
        return line

    def _read_chunked(self, deadline, max_body):
        body = bytearray()
        while True:
            line = self._read_line(deadline).split(b";")[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise BadReply(f"the reply has a malformed chunk size {bytes(line[:20])!r}") from None
            if size == 0:
                while self._read_line(deadline):  # trailers, up to the empty line
                    pass
                return body
            if len(body) + size > max_body:
                raise TooLarge(len(body) + size, max_body)
            body += self._read_exact(size, deadline, max_body)
            if self._read_line(deadline):
                raise BadReply("a chunk of the reply does not end with CRLF")

    def _read_to_end(self, deadline, max_body):
        body = bytearray(self._extra)
        self._extra = b""
        while True:
            try:
                data = self._recv(deadline, 1)
            except Closed:
                return body
            body += data
            if len(body) > max_body:
                raise TooLarge(len(body), max_body)
