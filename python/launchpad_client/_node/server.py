"""A Python object served as a node: the same wire as a C++ node.

`NodeServer` answers what a C++ node answers (docs/protocol.md): calls in
JSON or CBOR with the launch's secret, `describe` with the schemas of the
methods' type hints (methods.py), `health`, `metrics` as JSON and in the
Prometheus text format, `stop`, and every error with the same status, code
and body. Arguments are checked against the method's types before the
method runs (400 naming the argument), results on the way out (a value out
of its C++ range is a 500 that says so, not a wrong number on the wire).

One thread per connection, keep-alive: a call costs a read, a decode, the
method, an encode and one write. Requests are read as a client reads
replies (_wire/http.py). Calls to one node run one at a time unless its
class sets `lp_concurrent_handlers = True`, as C++ nodes do.

Given a `socket_path`, it serves there too, on a unix socket, for the
callers on its host (docs/protocol.md#on-one-host): the same requests and
replies, and a call's large arrays through shared memory
(_wire/shared_memory.py): the method's numpy arrays are then views of the
caller's segment, read-only.
"""

from __future__ import annotations

import hmac
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from .. import _protocol as protocol
from .. import metrics as user_metrics
from .._packages import cbor2
from .._packages import numpy as np
from .._wire import codec, shared_memory, untyped
from .._wire.http import MAX_HEAD, Reader
from . import malloc_tuning
from .figures import LATENCY_BOUNDS, NONE, MethodFigures, cumulative, label_value, prometheus_text
from .figures import resident_bytes
from .methods import Served, as_hint, described_methods, untyped_methods, wire_of
from .spec import DEFAULT_MAX_BODY

MAX_FIELDS = 100
_CALL = protocol.PATH_CALL
_DEADLINE = protocol.HEADER_DEADLINE.lower()
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            413: "Payload Too Large", 415: "Unsupported Media Type", 417: "Expectation Failed",
            431: "Request Header Fields Too Large", 500: "Internal Server Error",
            501: "Not Implemented", 503: "Service Unavailable", 504: "Gateway Timeout",
            505: "HTTP Version Not Supported"}
_JSON_TYPES = ("", protocol.MEDIA_JSON, protocol.MEDIA_FORM, protocol.MEDIA_PLAIN_TEXT)


class CallError(Exception):
    """An error reply: its status, code and message."""

    def __init__(self, status: int, code: str, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.close = status, code, message, close


class _Request:
    __slots__ = ("method", "path", "headers", "body")

    def __init__(self, method: str, path: str, headers: dict[str, str], body: Any) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body


_deadline = threading.local()


def caller_deadline() -> float | None:
    """When the caller of the method this thread runs stops waiting for its
    reply (time.monotonic()), less a tenth (at most 0.1 s) for the reply to
    travel; None without an `Lp-Deadline-Ms` header, or outside a method a
    NodeServer runs. As lp::caller_deadline() in C++: a method that waits
    (for data, for a batch) gives up then."""
    at: float | None = getattr(_deadline, "at", None)
    return at


class _Requests(Reader):
    """Reads HTTP/1.1 requests from one connection, within limits; a failure
    is the CallError to answer (then the connection closes)."""

    def __init__(self, connection: Any) -> None:
        super().__init__()
        self._connection = connection

    def _recv(self, received: int) -> bytes:
        data: bytes = self._connection.recv(256 * 1024)
        return data

    def _recv_into(self, view: memoryview, have: int, size: int) -> int:
        count: int = self._connection.recv_into(view, len(view))
        return count

    def _new_body(self, size: int) -> Any:
        # A large body goes into memory nobody zeroes first, and its typed
        # arrays stay there as the method's numpy arrays (codec.decode_cbor).
        if np is not None and size >= codec.LARGE_ARRAY:
            return np.empty(size, dtype=np.uint8)
        return bytearray(size)

    def _error_head_too_large(self, limit: int) -> Exception:
        return CallError(431, protocol.ERROR_HEADERS_TOO_LARGE,
                         f"the request's head is over {limit} bytes", close=True)

    def _error_ended(self, received: int, have: int | None, size: int | None) -> Exception:
        where = "a request's head" if size is None and have is None else "a body"
        return CallError(400, protocol.ERROR_BAD_REQUEST, f"the connection ended inside {where}",
                         close=True)

    def _error_malformed(self, what: str, text: bytes | str) -> Exception:
        message = {"field": f"malformed header line {str(text)[:200]!r}",
                   "lengths": "two different Content-Length headers",
                   "chunk size": "a chunk's size is not hexadecimal",
                   "chunk end": "a chunk longer than its size"}.get(what, "a malformed chunk")
        return CallError(400, protocol.ERROR_BAD_REQUEST, message, close=True)

    def _error_body_too_large(self, size: int, limit: int) -> Exception:
        return CallError(413, protocol.ERROR_PAYLOAD_TOO_LARGE,
                         f"the body is {size} bytes, over this node's limit of {limit}", close=True)

    def request(self, max_body: int) -> _Request | None:
        """The next request, or None when the peer closed between requests."""
        head = self.read_head(MAX_HEAD)
        if head is None:
            return None
        try:
            lines = head.decode("latin-1").split("\r\n")
        except UnicodeDecodeError:
            raise CallError(400, protocol.ERROR_BAD_REQUEST, "the request's head is not text",
                            close=True) from None
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[0].isalpha():
            raise CallError(400, protocol.ERROR_BAD_REQUEST,
                            f"malformed request line {lines[0][:200]!r}", close=True)
        method, target, version = parts
        if version != "HTTP/1.1":
            if version.startswith("HTTP/"):
                raise CallError(505, protocol.ERROR_BAD_REQUEST,
                                f"{version} is not served; speak HTTP/1.1", close=True)
            raise CallError(400, protocol.ERROR_BAD_REQUEST,
                            f"malformed request line {lines[0][:200]!r}", close=True)
        if len(lines) - 1 > MAX_FIELDS:
            raise CallError(431, protocol.ERROR_HEADERS_TOO_LARGE,
                            f"over {MAX_FIELDS} header fields", close=True)
        headers = self.fields(lines[1:])
        expect = headers.get("expect")
        if expect is not None and expect.lower() != "100-continue":
            raise CallError(417, protocol.ERROR_BAD_REQUEST, f"Expect: {expect} is not served",
                            close=True)
        path = unquote(target.split("?", 1)[0])
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise CallError(501, protocol.ERROR_BAD_REQUEST,
                                f"Transfer-Encoding {coding} is not served", close=True)
            if expect is not None:
                self._connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            return _Request(method, path, headers, self.read_chunked(max_body))
        try:
            length = int(headers.get("content-length", "0"))
            if length < 0:
                raise ValueError
        except ValueError:
            raise CallError(400, protocol.ERROR_BAD_REQUEST, "Content-Length is not a length",
                            close=True) from None
        if expect is not None and len(self._extra) < length <= max_body:
            self._connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        return _Request(method, path, headers, self.read_exact(length, max_body))


class NodeServer:
    """Serves `target`'s methods as node `node` of program `program`.

    `declared`: the methods C++ declares for this node (describe's list),
    whose types decide the checks; `secret`: the launch's secret (None: no
    check, as `--lp_insecure`); `tls`: an ssl.SSLContext for the server side,
    or None for plain HTTP."""

    def __init__(self, target: Any, *, node: str, program: str, secret: str | None,
                 declared: list[dict[str, Any]] | None = None, tls: ssl.SSLContext | None = None,
                 host: str = "127.0.0.1", port: int = 0, max_body: int = DEFAULT_MAX_BODY,
                 service: str | None = None, untyped: bool = False,
                 socket_path: str | None = None) -> None:
        self.target = target
        self.node = node
        self.program = program
        self.service = service or type(target).__name__
        self._secret = secret
        self._tls = tls
        self._max_body = max_body
        by_name = {m["name"]: m for m in (declared or [])}
        # untyped: a Launchpad program's node (docs/coming_from_launchpad.md).
        self.methods_described = (untyped_methods(target) if untyped
                                  else described_methods(type(target), declared))
        self._methods = {e["name"]: Served(target, e, by_name.get(e["name"]))
                         for e in self.methods_described}
        # A Launchpad program's node is served as Courier serves it: calls at
        # once (a batched handler gathers them).
        self._lock = (None if untyped or getattr(target, "lp_concurrent_handlers", False)
                      else threading.Lock())
        self._figures_lock = threading.Lock()
        self._none_figures = MethodFigures()  # calls to a method it lacks, as "(none)"
        self._draining = False
        self._connections: set[Any] = set()
        self._connections_lock = threading.Lock()
        self.on_stop: Callable[[], None] | None = None  # called for POST stop
        self._listener = socket.create_server((host, port), family=_family(host), backlog=512)
        self.host, self.port = self._listener.getsockname()[:2]
        self.socket_path = socket_path
        self._local = shared_memory.listen_unix(socket_path) if socket_path else None
        self._threads: list[threading.Thread] = []

    @property
    def turn(self) -> threading.Lock | None:
        """The lock calls take one at a time; None for a class that sets
        lp_concurrent_handlers. A checkpoint's state() takes it too."""
        return self._lock

    @property
    def url(self) -> str:
        """Where the node serves: http://host:port, or https:// with TLS."""
        scheme = "https" if self._tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def start(self) -> NodeServer:
        """Starts accepting connections, on a thread of its own for each
        socket; returns self."""
        for listener, local in ((self._listener, False), (self._local, True)):
            if listener is None:
                continue
            thread = threading.Thread(target=self._accept_all, args=(listener, local),
                                      name=f"lp-{self.node}-accept", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def drain(self) -> None:
        """From now on calls get 503 stopping; health says stopping."""
        self._draining = True

    def wait_idle(self, timeout: float) -> bool:
        """Waits up to `timeout` seconds for the calls that run to end."""
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            with self._figures_lock:
                if not any(m.figures.in_flight for m in self._methods.values()):
                    return True
            time.sleep(0.01)
        return False

    def close(self) -> None:
        """Stops accepting and closes every connection (and removes the unix
        socket)."""
        self._draining = True
        for listener in (self._listener, self._local):
            if listener is None:
                continue
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        if self._local is not None and self.socket_path is not None:
            try:
                os.unlink(self.socket_path)
            except OSError:
                pass
        with self._connections_lock:
            for connection in list(self._connections):
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(timeout=5)

    # --- Connections. -------------------------------------------------------

    def _accept_all(self, listener: socket.socket, local: bool) -> None:
        while True:
            try:
                accepted, _ = listener.accept()
            except OSError:
                return
            connection: Any = accepted
            if local:
                connection = _LocalConnection(accepted)
            else:
                accepted.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve_then_end, args=(connection,), daemon=True).start()

    def _serve_then_end(self, connection: Any) -> None:
        try:
            self._serve(connection)
        finally:
            malloc_tuning.thread_ended()  # what the connection held goes back to the kernel

    def _serve(self, connection: Any) -> None:
        with self._connections_lock:
            self._connections.add(connection)
        local = isinstance(connection, _LocalConnection)
        try:
            if self._tls and not local:  # a unix socket never leaves the host
                connection.settimeout(30)
                connection = self._tls.wrap_socket(connection, server_side=True)
                connection.settimeout(None)
            reader = _Requests(connection)
            while True:
                try:
                    request = reader.request(self._max_body)
                except CallError as e:
                    self._send_error(connection, e, "", close=True)
                    return
                if request is None:
                    return
                if local:
                    try:
                        connection.take_segments(request.headers, self._max_body)
                    except shared_memory.SegmentError as e:
                        self._send_error(connection, CallError(400, protocol.ERROR_BAD_REQUEST,
                                                               str(e)), "", close=False)
                        continue
                keep = self._answer(connection, request)
                if not keep:
                    return
        except (OSError, ValueError):
            return
        finally:
            with self._connections_lock:
                self._connections.discard(connection)
            try:
                connection.close()
            except OSError:
                pass

    # --- Requests. ----------------------------------------------------------

    def _answer(self, connection: Any, request: _Request) -> bool:
        close = request.headers.get("connection", "").lower() == "close"
        path = request.path
        method = ""
        start = time.perf_counter()
        try:
            if path == protocol.PATH_HEALTH and request.method == "GET":
                status = 503 if self._draining else 200
                return self._send_value(connection, status, {
                    "status": protocol.HEALTH_STOPPING if self._draining else protocol.HEALTH_SERVING},
                    request, close)
            if path.startswith(_CALL) and request.method == "POST":
                method = path[len(_CALL):]
                return self._call(connection, request, method, start, close)
            self._authorize(request)
            if path == protocol.PATH_DESCRIBE and request.method == "GET":
                return self._send_value(connection, 200, {
                    "methods": self.methods_described, "node": self.node,
                    "program": self.program, "protocol": protocol.WIRE_VERSION,
                    "service": self.service,
                    "language": "python"}, request, close)
            if path == protocol.PATH_METRICS and request.method == "GET":
                return self._metrics(connection, request, close)
            if path == protocol.PATH_STOP and request.method == "POST":
                if self.on_stop:
                    self.on_stop()
                return self._send_value(connection, 200, {"status": protocol.HEALTH_STOPPING},
                                        request, close)
            raise CallError(404, protocol.ERROR_NO_SUCH_ROUTE, f"no route {request.method} {path}")
        except CallError as e:
            self._send_error(connection, e, method, close=close or e.close)
            return not (close or e.close)
        except Exception as e:  # a fault of this server's own: answered, never a silent close
            self._send_error(connection, CallError(500, protocol.ERROR_REMOTE_EXCEPTION,
                                                   f"the Python node failed to answer: "
                                                   f"{type(e).__name__}: {e}"), method, close=True)
            return False

    def _authorize(self, request: _Request) -> None:
        if self._secret is None:
            return
        header = request.headers.get("authorization")
        if header is None:
            raise CallError(401, protocol.ERROR_UNAUTHENTICATED,
                            "this node needs 'Authorization: Bearer <secret>'; the secret is in the "
                            "launch's run directory (docs/protocol.md)")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            raise CallError(401, protocol.ERROR_UNAUTHENTICATED,
                            "the Authorization header's scheme is not Bearer; send "
                            "'Authorization: Bearer <secret>'")
        token = token.strip()
        if not token:
            raise CallError(401, protocol.ERROR_UNAUTHENTICATED,
                            "the Authorization header has no bearer token after 'Bearer'")
        if not hmac.compare_digest(token.encode(), self._secret.encode()):
            raise CallError(401, protocol.ERROR_UNAUTHENTICATED, "the bearer token is not this launch's secret")

    def _call(self, connection: Any, request: _Request, name: str, start: float,
              close: bool) -> bool:
        served = self._methods.get(name)
        try:
            self._authorize(request)
        except CallError as e:
            # Counted as a C++ node counts it: under the method, or "(none)"
            # for a name it lacks, with no bytes (its body was not read as a
            # call's).
            self._send_error(connection, e, name, close)
            with self._figures_lock:
                (served.figures if served else self._none_figures).record(
                    e.status, time.perf_counter() - start, 0, 0)
            return not close
        if served is None:
            error = CallError(404, protocol.ERROR_NO_SUCH_METHOD,
                              f"{self.service} has no method {name!r}; its methods are "
                              f"{', '.join(sorted(self._methods)) or NONE}")
            # Counted under "(none)", as a C++ node counts a name it lacks (a
            # peer cannot add a figure per made-up name), with the error's bytes.
            reply_bytes = self._send_error(connection, error, name, close)
            with self._figures_lock:
                self._none_figures.record(404, time.perf_counter() - start, len(request.body),
                                          reply_bytes)
            return not close
        status = 200
        reply_bytes = 0
        shared_bytes = 0  # of the segments the request brought
        with self._figures_lock:
            served.figures.in_flight += 1
        try:
            if self._draining:
                raise CallError(503, protocol.ERROR_STOPPING,
                                "the program is stopping; the call did not run")
            content_type = _content_type(request)
            segments = (connection.exchange.segments()
                        if isinstance(connection, _LocalConnection) else None)
            try:
                arguments = codec.decode(request.body, content_type, segments)
            except (ValueError, RecursionError) as e:
                raise CallError(400, protocol.ERROR_BAD_REQUEST, f"the body is not {_format_name(content_type)}: {e}")
            if not isinstance(arguments, list):
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"the body of a call is an array of its arguments, not "
                                f"{type(arguments).__name__}")
            if not served.untyped and len(arguments) != served.arity:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"{name} takes {served.arity} argument(s), got {len(arguments)}")
            values: list[Any] = []
            keywords: dict[str, Any] = {}
            if served.untyped:
                try:
                    values, keywords = untyped.call_from_wire(arguments, f"a call of {name}")
                except (ValueError, RecursionError) as e:
                    raise CallError(400, protocol.ERROR_BAD_REQUEST, str(e))
            for i, (value, cpp, hint) in enumerate(zip(arguments, served.params, served.param_hints)):
                try:
                    cpp.to_wire(value, f"argument {i + 1} of {name}")
                except (TypeError, ValueError, OverflowError) as e:
                    raise CallError(400, protocol.ERROR_BAD_REQUEST, str(e))
                values.append(as_hint(cpp.from_wire(value), hint))
            deadline = request.headers.get(_DEADLINE)
            _deadline.at = None
            if deadline is not None:
                try:
                    ms = float(deadline)
                    _deadline.at = time.monotonic() + ms / 1000 - min(ms / 10000, 0.1)
                except ValueError:
                    raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                    f"{protocol.HEADER_DEADLINE} is not a number: {deadline!r}")
            try:
                if self._lock is not None:
                    with self._lock:
                        result = served.function(*values, **keywords)
                else:
                    result = served.function(*values, **keywords)
            except CallError:
                raise
            except Exception as e:  # the method's own: the caller gets it, typed
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION, f"{type(e).__name__}: {e}")
            finally:
                _deadline.at = None
            reply_type = _reply_type(request, content_type)
            try:
                if served.untyped:
                    wire = untyped.to_wire(result, f"the result of {name}",
                                           cbor=reply_type == codec.CBOR)
                else:
                    wire = None if served.returns_nothing or served.result is None else served.result.to_wire(
                        wire_of(result), f"the result of {name}")
            except (TypeError, ValueError, OverflowError) as e:
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION, str(e) if served.untyped else
                                f"{e} (the method returned what its C++ declaration cannot carry)")
            try:
                body = codec.encode({"result": wire}, reply_type)
            except codec.EncodeError as e:
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION, str(e))
            reply_bytes = sum(len(memoryview(p)) for p in body)
            if isinstance(connection, _LocalConnection):
                shared_bytes = sum(arrival.segment.size for arrival in segments or ())
                # Its large arrays into a segment, to a caller that reads them
                # there; the values of the call are let go first, so that the
                # caller's segments they read go back (Lp-Returned).
                body = connection.exchange.pack(body, codec.arrays_of(body))
                # (`value` too: the loop above leaves it holding the last argument.)
                values = []
                arguments = result = wire = segments = value = None
            self._send(connection, 200, reply_type, body, close)
            return not close
        except CallError as e:
            status = e.status
            raise
        finally:
            with self._figures_lock:
                served.figures.in_flight -= 1
                served.figures.record(status, time.perf_counter() - start,
                                      len(request.body) + shared_bytes, reply_bytes)
            malloc_tuning.call_served()

    def methods_in_flight(self) -> str:
        """The methods with calls running now and how many, as a C++ node
        names them when it hangs ("tie (1), step (2)"); empty if none."""
        with self._figures_lock:
            busy = [(name, m.figures.in_flight) for name, m in self._methods.items()]
            busy.append((NONE, self._none_figures.in_flight))
        return ", ".join(f"{name} ({count})" for name, count in busy if count > 0)

    def _metrics(self, connection: Any, request: _Request, close: bool) -> bool:
        if codec.JSON in request.headers.get("accept", ""):
            return self._send_value(connection, 200, self.metrics(), request, close, codec.JSON)
        self._send(connection, 200, protocol.MEDIA_PROMETHEUS, [self.prometheus()], close)
        return not close

    def prometheus(self) -> bytes:
        """The node's figures in the Prometheus text format, as a C++ node
        writes them (detail/observe/exposition.hpp), its user figures
        (metrics.py) last."""
        node = label_value(self.node)
        return (prometheus_text(self.metrics(user=False, sums=True), node)
                + user_metrics._registry.prometheus(node)).encode()

    def metrics(self, user: bool = True, *, sums: bool = False) -> dict[str, Any]:
        """The node's figures, in the shape of a C++ node's metrics JSON,
        with what its code records through launchpad_client.metrics (the
        process's figures: a Python node is one process); `user=False`
        leaves those empty. Calls to a method the node lacks are the last
        method, "(none)", once there is one. `sums=True` adds each method's
        "latency_sum" (the calls' total time, seconds), a key the C++ JSON
        lacks: what the Prometheus text's _sum reads, from the same
        snapshot as its buckets."""

        def entry(name: str, figures: MethodFigures) -> dict[str, Any]:
            out: dict[str, Any] = {
                   "name": name, "calls": figures.calls, "by_code": dict(figures.by_code),
                   # The last bucket, over the last bound (+Inf), holds every call.
                   "latency_buckets": cumulative(figures.buckets) + [figures.calls],
                   "fastest": figures.fastest, "slowest": figures.slowest,
                   "in_flight": figures.in_flight, "request_bytes": figures.request_bytes,
                   "reply_bytes": figures.reply_bytes, "batches": 0}
            if sums:
                out["latency_sum"] = figures.seconds
            return out

        with self._figures_lock:
            methods = [entry(name, m.figures) for name, m in self._methods.items()]
            if self._none_figures.calls:
                methods.append(entry(NONE, self._none_figures))
        with self._connections_lock:
            connections = len(self._connections)
        times = os.times()
        return {"node": self.node, "pid": os.getpid(), "host": socket.gethostname(),
                "resident_bytes": resident_bytes(), "cpu_seconds": times.user + times.system,
                "threads": threading.active_count(), "connections": connections,
                "restarts": int(os.environ.get(protocol.ENVIRONMENT_RESTARTS, "0") or 0),
                "shared_memory": self.shared_memory_figures(),
                "latency_bounds": list(LATENCY_BOUNDS), "methods": methods,
                **(user_metrics._registry.figures() if user else
                   {"counters": {}, "gauges": {}, "series": {}})}

    def shared_memory_figures(self) -> dict[str, int]:
        """The process's shared memory for calls on its host, as a C++
        node's "shared_memory" (wire/shared_memory.hpp): bytes held, messages
        whose arrays went through it, fallbacks to the socket at the cap,
        segments a peer kept."""
        return shared_memory.pool().figures()

    # --- Replies. -----------------------------------------------------------

    def _send_value(self, connection: Any, status: int, value: Any, request: _Request,
                    close: bool, content_type: str | None = None) -> bool:
        reply_type = content_type or _reply_type(request, codec.JSON)
        self._send(connection, status, reply_type, codec.encode(value, reply_type), close)
        return not close

    def _send_error(self, connection: Any, error: CallError, method: str, close: bool) -> int:
        """Sends the error's body; returns its length."""
        body = json.dumps({"error": {"code": error.code, "message": error.message,
                                     "node": self.node, "method": method}},
                          ensure_ascii=False).encode()
        try:
            self._send(connection, error.status, codec.JSON, [body], close)
        except OSError:
            pass
        return len(body)

    @staticmethod
    def _send(connection: Any, status: int, content_type: str, pieces: list[Any],
              close: bool) -> None:
        length = sum(len(memoryview(p)) for p in pieces)
        text = (f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {length}\r\n"
                f"{'Connection: close' if close else 'Connection: keep-alive'}\r\n")
        if isinstance(connection, _LocalConnection):
            connection.send_reply(text, pieces)
            return
        head = (text + "\r\n").encode()
        if length < 64 * 1024:
            connection.sendall(head + b"".join(bytes(p) if not isinstance(p, bytes) else p
                                               for p in pieces))
        else:
            connection.sendall(head)
            for piece in pieces:
                connection.sendall(piece)


class _LocalConnection:
    """A connection on the node's unix socket: its reads keep the
    descriptors that come (the segments of shared memory), and a reply
    sends its own segment's, with the head lines of its exchange."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.exchange = shared_memory.Exchange()
        self._fds: list[int] = []
        self._lost = False
        self._scratch = bytearray(256 * 1024)

    def recv(self, size: int) -> bytes:
        count = self.recv_into(memoryview(self._scratch), min(size, len(self._scratch)))
        return bytes(self._scratch[:count])

    def recv_into(self, view: memoryview, size: int = 0) -> int:
        count, lost = shared_memory.receive_into(self.sock, view[:size or len(view)], self._fds)
        self._lost = self._lost or lost
        return count

    def take_segments(self, headers: dict[str, str], largest: int) -> None:
        """Maps the segments the request brought (shared_memory.Exchange);
        raises SegmentError, each descriptor closed, for ones that are not
        what its head says."""
        lost, self._lost = self._lost, False
        if lost:
            for fd in self._fds:
                os.close(fd)
            self._fds.clear()
            raise shared_memory.SegmentError(
                f"more descriptors came than a message may bring ({shared_memory.MAX_DESCRIPTORS})")
        self.exchange.received(headers, self._fds, largest)

    def sendall(self, data: bytes) -> None:
        self._send_all([data])

    def send_reply(self, head: str, pieces: list[Any]) -> None:
        """A reply, its head's lines of shared memory and its segment with it."""
        whole = (head + self.exchange.head_lines() + "\r\n").encode()
        sent = False
        try:
            self._send_all([whole, *pieces], self.exchange.descriptor())
            sent = True
        finally:
            self.exchange.done(sent)

    def _send_all(self, pieces: list[Any], fd: int | None = None) -> None:
        views = [memoryview(p).cast("B") for p in pieces]
        views = [v for v in views if v.nbytes]
        while views:
            sent = shared_memory.send_with(self.sock, views[:1024], fd)
            fd = None
            while views and sent >= views[0].nbytes:
                sent -= views[0].nbytes
                views.pop(0)
            if sent:
                views[0] = views[0][sent:]

    def shutdown(self, how: int) -> None:
        self.sock.shutdown(how)

    def close(self) -> None:
        self.exchange.close()
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self.sock.close()


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _content_type(request: _Request) -> str:
    value = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if value == codec.CBOR:
        if cbor2 is None:
            raise CallError(415, protocol.ERROR_UNSUPPORTED_MEDIA_TYPE,
                            "this Python node has no cbor2 (apt-get install python3-cbor2); send JSON")
        return codec.CBOR
    if value in _JSON_TYPES:
        return codec.JSON
    raise CallError(415, protocol.ERROR_UNSUPPORTED_MEDIA_TYPE,
                    f"Content-Type {value} is neither {codec.JSON} nor {codec.CBOR}")


def _reply_type(request: _Request, request_type: str) -> str:
    accept = request.headers.get("accept", "")
    if codec.CBOR in accept and cbor2 is not None:
        return codec.CBOR
    if codec.JSON in accept:
        return codec.JSON
    return request_type


def _format_name(content_type: str) -> str:
    return "CBOR" if content_type == codec.CBOR else "JSON"
