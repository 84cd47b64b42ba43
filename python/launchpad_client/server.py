"""A Python object served as a node: the same wire as a C++ node.

`NodeServer` answers what a C++ node answers (docs/protocol.md): calls in
JSON or CBOR with the launch's secret, `describe` with the schemas of the
methods' type hints (hints.py), `health`, `metrics` as JSON and in the
Prometheus text format, `stop`, and every error with the same status, code
and body. Arguments are checked against the method's types before the
method runs (400 naming the argument), results on the way out (a value out
of its C++ range is a 500 that says so, not a wrong number on the wire).

One thread per connection, keep-alive: a call costs a read, a decode, the
method, an encode and one write. Calls to one node run one at a time unless
its class sets `lp_concurrent_handlers = True`, as C++ nodes do.
"""

import dataclasses
import hmac
import json
import os
import socket
import threading
import time
import types
import typing
from urllib.parse import unquote

from . import _protocol as protocol
from . import codec, hints, malloc_tuning
from . import metrics as user_metrics
from .optional_packages import numpy as np
from .schema import from_schema

MAX_HEAD = 64 * 1024
MAX_FIELDS = 100
DEFAULT_MAX_BODY = 256 * 1024 * 1024
# Upper bounds of the latency buckets, in seconds: the C++ node's, so that the
# status page reads both alike.
LATENCY_BOUNDS = protocol.CALLS_LATENCY_BOUNDS
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            413: "Payload Too Large", 415: "Unsupported Media Type", 417: "Expectation Failed",
            431: "Request Header Fields Too Large", 500: "Internal Server Error",
            501: "Not Implemented", 503: "Service Unavailable", 504: "Gateway Timeout",
            505: "HTTP Version Not Supported"}
PROMETHEUS_TYPE = protocol.MEDIA_PROMETHEUS
_JSON_TYPES = ("", protocol.MEDIA_JSON, protocol.MEDIA_FORM, protocol.MEDIA_PLAIN_TEXT)


class CallError(Exception):
    """An error reply: its status, code and message."""

    def __init__(self, status, code, message, close=False):
        super().__init__(message)
        self.status, self.code, self.message, self.close = status, code, message, close


class _Request:
    __slots__ = ("method", "path", "headers", "body")

    def __init__(self, method, path, headers, body):
        self.method, self.path, self.headers, self.body = method, path, headers, body


_deadline = threading.local()


def caller_deadline():
    """When the caller of the method this thread runs stops waiting for its
    reply (time.monotonic()), less a tenth (at most 0.1 s) for the reply to
    travel; None without an `Lp-Deadline-Ms` header."""
    return getattr(_deadline, "at", None)


class _MethodFigures:
    """What a node counts of the calls to one of its methods (or, as
    "(none)", to a method it lacks), as call_figures in
    detail/observe/call_metrics.hpp: `buckets` per latency bound, not
    cumulative, without the calls over the last bound (`calls` counts those
    too); `seconds`, the calls' total time, the histogram's _sum."""

    def __init__(self):
        self.calls = 0
        self.by_code = {}
        self.buckets = [0] * len(LATENCY_BOUNDS)
        self.seconds = 0.0
        self.fastest = None
        self.slowest = None
        self.in_flight = 0
        self.request_bytes = 0
        self.reply_bytes = 0

    def record(self, status, seconds, request_bytes, reply_bytes):
        self.calls += 1
        key = str(status)
        self.by_code[key] = self.by_code.get(key, 0) + 1
        for i, bound in enumerate(LATENCY_BOUNDS):
            if seconds <= bound:
                self.buckets[i] += 1
                break
        self.seconds += seconds
        self.fastest = seconds if self.fastest is None else min(self.fastest, seconds)
        self.slowest = seconds if self.slowest is None else max(self.slowest, seconds)
        self.request_bytes += request_bytes
        self.reply_bytes += reply_bytes


class _Method:
    """A served method: its callable, the checks of its arguments and result
    (from the C++ declaration when there is one, else from its hints), and
    the hints that turn decoded values into the Python types it takes."""

    def __init__(self, target, entry, declared):
        self.name = entry["name"]
        self.function = getattr(target, self.name)
        self.arity = entry["arity"]
        schemas = declared or entry
        self.params = [from_schema(s) for s in schemas["params"]]
        self.result = from_schema(schemas["result"])
        self.returns_nothing = schemas["result"].get("kind") == protocol.KIND_NOTHING
        self.param_hints, self.result_hint, _ = hints.method_hints(type(target), self.name)
        self.figures = _MethodFigures()


def _with_widths(schema, declared=None):
    """A schema from hints with the "any width" of a plain int or float made
    the C++ declaration's (`declared`, the same place in its schema), or
    else the widest (int64, float64)."""
    if not isinstance(schema, dict):
        return schema
    declared = declared if isinstance(declared, dict) else {}
    out = {}
    for key, value in schema.items():
        if isinstance(value, dict):
            value = _with_widths(value, declared.get(key))
        elif isinstance(value, list):
            theirs = declared.get(key) if isinstance(declared.get(key), list) else []
            value = [_with_widths(v, theirs[i] if i < len(theirs) else None)
                     for i, v in enumerate(value)]
        out[key] = value
    if out.get("kind") in (protocol.KIND_INTEGER, protocol.KIND_FLOATING) and out.get("bits") is None:
        out["bits"] = declared.get("bits", 64)
        if out["kind"] == protocol.KIND_INTEGER:
            out["signed"] = declared.get("signed", True)
    return out


def as_hint(value, hint):
    """A decoded value as the Python type its hint names: a dict as a
    dataclass, a list as a tuple or a set, at every depth."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return as_hint(value, args[0])
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and isinstance(value, dict):
        types_of = typing.get_type_hints(hint, include_extras=True)
        return hint(**{f.name: as_hint(value[f.name], types_of[f.name])
                       for f in dataclasses.fields(hint)})
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return as_hint(value, inner[0]) if len(inner) == 1 else value
    if origin is tuple and isinstance(value, (list, tuple)):
        return tuple(as_hint(v, h) for v, h in zip(value, args))
    if origin in (set, frozenset) and isinstance(value, (list, tuple, set)):
        return origin(as_hint(v, args[0]) for v in value)
    if origin is list and isinstance(value, list):
        return [as_hint(v, args[0]) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: as_hint(v, args[1]) for k, v in value.items()}
    return value


def _wire_of(value):
    """A result as what the checks take: dataclasses as dicts, sets as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _wire_of(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return [_wire_of(v) for v in sorted(value)]
    if isinstance(value, tuple):
        return [_wire_of(v) for v in value]
    if isinstance(value, list):
        return [_wire_of(v) for v in value]
    if isinstance(value, dict):
        return {k: _wire_of(v) for k, v in value.items()}
    return value


def described_methods(cls, declared=None):
    """describe's "methods" for a class: every method C++ declares for it
    (`declared`, describe's list), else every public method with hints."""
    if declared is not None:
        names = [m["name"] for m in declared]
    else:
        names = [n for n, member in vars(cls).items()
                 if callable(member) and not n.startswith("_") and n not in ("run", "lp_save", "lp_restore")]
    by_name = {m["name"]: m for m in declared or []}
    out = []
    for name in names:
        entry = hints.describe_method(cls, name)
        entry.pop("hints")
        theirs = by_name.get(name, {})
        entry["params"] = [_with_widths(p, d) for p, d in
                           zip(entry["params"], theirs.get("params", [None] * entry["arity"]))]
        entry["result"] = _with_widths(entry["result"], theirs.get("result"))
        out.append(entry)
    return out


class NodeServer:
    """Serves `target`'s methods as node `node` of program `program`.

    `declared`: the methods C++ declares for this node (describe's list),
    whose types decide the checks; `secret`: the launch's secret (None: no
    check, as `--lp_insecure`); `tls`: an ssl.SSLContext for the server side,
    or None for plain HTTP."""

    def __init__(self, target, *, node, program, secret, declared=None, tls=None,
                 host="127.0.0.1", port=0, max_body=DEFAULT_MAX_BODY, service=None):
        self.target = target
        self.node = node
        self.program = program
        self.service = service or type(target).__name__
        self._secret = secret
        self._tls = tls
        self._max_body = max_body
        by_name = {m["name"]: m for m in (declared or [])}
        self.methods_described = described_methods(type(target), declared)
        self._methods = {e["name"]: _Method(target, e, by_name.get(e["name"]))
                         for e in self.methods_described}
        self._lock = None if getattr(target, "lp_concurrent_handlers", False) else threading.Lock()
        self._figures_lock = threading.Lock()
        self._none_figures = _MethodFigures()  # calls to a method it lacks, as "(none)"
        self._draining = False
        self._connections = set()
        self._connections_lock = threading.Lock()
        self.on_stop = None  # called for POST /lp/v1/stop
        self._listener = socket.create_server((host, port), family=_family(host), backlog=512)
        self.host, self.port = self._listener.getsockname()[:2]
        self._thread = None

    @property
    def url(self):
        scheme = "https" if self._tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def start(self):
        self._thread = threading.Thread(target=self._accept_all, name=f"lp-{self.node}-accept",
                                        daemon=True)
        self._thread.start()
        return self

    def drain(self):
        """From now on calls get 503 stopping; health says stopping."""
        self._draining = True

    def wait_idle(self, timeout):
        """Waits up to `timeout` seconds for the calls that run to end."""
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            with self._figures_lock:
                if not any(m.figures.in_flight for m in self._methods.values()):
                    return True
            time.sleep(0.01)
        return False

    def close(self):
        """Stops accepting and closes every connection."""
        self._draining = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._connections_lock:
            for connection in list(self._connections):
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._thread:
            self._thread.join(timeout=5)

    # --- Connections. -------------------------------------------------------

    def _accept_all(self):
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve_then_end, args=(connection,), daemon=True).start()

    def _serve_then_end(self, connection):
        try:
            self._serve(connection)
        finally:
            malloc_tuning.thread_ended()  # what the connection held goes back to the kernel

    def _serve(self, connection):
        with self._connections_lock:
            self._connections.add(connection)
        try:
            if self._tls:
                connection.settimeout(30)
                connection = self._tls.wrap_socket(connection, server_side=True)
                connection.settimeout(None)
            reader = _Reader(connection)
            while True:
                try:
                    request = reader.request(self._max_body)
                except CallError as e:
                    self._send_error(connection, e, "", close=True)
                    return
                if request is None:
                    return
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

    def _answer(self, connection, request):
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
            if path.startswith(protocol.PATH_CALL) and request.method == "POST":
                method = path[len(protocol.PATH_CALL):]
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
                return self._send_value(connection, 200, {"status": protocol.HEALTH_STOPPING}, request,
                                        close)
            raise CallError(404, protocol.ERROR_NO_SUCH_ROUTE, f"no route {request.method} {path}")
        except CallError as e:
            self._send_error(connection, e, method, close=close or e.close)
            return not (close or e.close)
        except Exception as e:  # a fault of this server's own: answered, never a silent close
            self._send_error(connection, CallError(500, protocol.ERROR_REMOTE_EXCEPTION,
                                                   f"the Python node failed to answer: "
                                                   f"{type(e).__name__}: {e}"), method, close=True)
            return False

    def _authorize(self, request):
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
            raise CallError(401, protocol.ERROR_UNAUTHENTICATED,
                            "the bearer token is not this launch's secret")

    def _call(self, connection, request, name, start, close):
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
                              f"{', '.join(sorted(self._methods)) or '(none)'}")
            # Counted under "(none)", as a C++ node counts a name it lacks (a
            # peer cannot add a figure per made-up name), with the error's bytes.
            reply_bytes = self._send_error(connection, error, name, close)
            with self._figures_lock:
                self._none_figures.record(404, time.perf_counter() - start, len(request.body),
                                          reply_bytes)
            return not close
        status = 200
        reply_bytes = 0
        with self._figures_lock:
            served.figures.in_flight += 1
        try:
            if self._draining:
                raise CallError(503, protocol.ERROR_STOPPING, "the program is stopping; the call did not run")
            content_type = _content_type(request)
            try:
                arguments = codec.decode(request.body, content_type)
            except (ValueError, RecursionError) as e:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"the body is not {_format_name(content_type)}: {e}")
            if not isinstance(arguments, list):
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"the body of a call is an array of its arguments, not "
                                f"{type(arguments).__name__}")
            if len(arguments) != served.arity:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"{name} takes {served.arity} argument(s), got {len(arguments)}")
            values = []
            for i, (value, cpp, hint) in enumerate(zip(arguments, served.params, served.param_hints)):
                try:
                    cpp.to_wire(value, f"argument {i + 1} of {name}")
                except (TypeError, ValueError, OverflowError) as e:
                    raise CallError(400, protocol.ERROR_BAD_REQUEST, str(e))
                values.append(as_hint(cpp.from_wire(value), hint))
            deadline = request.headers.get(protocol.HEADER_DEADLINE.lower())
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
                        result = served.function(*values)
                else:
                    result = served.function(*values)
            except CallError:
                raise
            except Exception as e:  # the method's own: the caller gets it, typed
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION, f"{type(e).__name__}: {e}")
            finally:
                _deadline.at = None
            try:
                wire = None if served.returns_nothing else served.result.to_wire(
                    _wire_of(result), f"the result of {name}")
            except (TypeError, ValueError, OverflowError) as e:
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION,
                                f"{e} (the method returned what its C++ declaration cannot carry)")
            reply_type = _reply_type(request, content_type)
            try:
                body = codec.encode({"result": wire}, reply_type)
            except codec.EncodeError as e:
                raise CallError(500, protocol.ERROR_REMOTE_EXCEPTION, str(e))
            reply_bytes = sum(len(memoryview(p)) for p in body)
            self._send(connection, 200, reply_type, body, close)
            return not close
        except CallError as e:
            status = e.status
            raise
        finally:
            with self._figures_lock:
                served.figures.in_flight -= 1
                served.figures.record(status, time.perf_counter() - start, len(request.body),
                                      reply_bytes)
            malloc_tuning.call_served()

    def methods_in_flight(self):
        """The methods with calls running now and how many, as a C++ node
        names them when it hangs ("tie (1), step (2)"); empty if none."""
        with self._figures_lock:
            busy = [(name, m.figures.in_flight) for name, m in self._methods.items()]
            busy.append((protocol.CALLS_UNKNOWN_METHOD, self._none_figures.in_flight))
        return ", ".join(f"{name} ({count})" for name, count in busy if count > 0)

    def _metrics(self, connection, request, close):
        if codec.JSON in request.headers.get("accept", ""):
            return self._send_value(connection, 200, self.metrics(), request, close, codec.JSON)
        self._send(connection, 200, PROMETHEUS_TYPE, [self.prometheus()], close)
        return not close

    def prometheus(self):
        """The node's figures in the Prometheus text format, as a C++ node
        writes them (detail/observe/exposition.hpp), its user figures
        (metrics.py) last."""
        node = _label_value(self.node)
        return (_prometheus(self.metrics(user=False, sums=True), node)
                + user_metrics._registry.prometheus(node)).encode()

    def metrics(self, user=True, *, sums=False):
        """The node's figures, in the shape of a C++ node's metrics JSON,
        with what its code records through launchpad_client.metrics (the
        process's figures: a Python node is one process); `user=False`
        leaves those empty. Calls to a method the node lacks are the last
        method, "(none)", once there is one. `sums=True` adds each method's
        "latency_sum" (the calls' total time, seconds), a key the C++ JSON
        lacks: what the Prometheus text's _sum reads, from the same
        snapshot as its buckets."""

        def entry(name, figures):
            out = {"name": name, "calls": figures.calls, "by_code": dict(figures.by_code),
                   # The last bucket, over the last bound (+Inf), holds every call.
                   "latency_buckets": _cumulative(figures.buckets) + [figures.calls],
                   "fastest": figures.fastest, "slowest": figures.slowest,
                   "in_flight": figures.in_flight, "request_bytes": figures.request_bytes,
                   "reply_bytes": figures.reply_bytes, "batches": 0}
            if sums:
                out["latency_sum"] = figures.seconds
            return out

        with self._figures_lock:
            methods = [entry(name, m.figures) for name, m in self._methods.items()]
            if self._none_figures.calls:
                methods.append(entry(protocol.CALLS_UNKNOWN_METHOD, self._none_figures))
        with self._connections_lock:
            connections = len(self._connections)
        times = os.times()
        return {"node": self.node, "pid": os.getpid(), "host": socket.gethostname(),
                "resident_bytes": _resident_bytes(), "cpu_seconds": times.user + times.system,
                "threads": threading.active_count(), "connections": connections,
                "restarts": int(os.environ.get(protocol.ENVIRONMENT_RESTARTS, "0") or 0),
                "latency_bounds": list(LATENCY_BOUNDS), "methods": methods,
                **(user_metrics._registry.figures() if user else
                   {"counters": {}, "gauges": {}, "series": {}})}

    # --- Replies. -----------------------------------------------------------

    def _send_value(self, connection, status, value, request, close, content_type=None):
        reply_type = content_type or _reply_type(request, codec.JSON)
        self._send(connection, status, reply_type, codec.encode(value, reply_type), close)
        return not close

    def _send_error(self, connection, error, method, close):
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
    def _send(connection, status, content_type, pieces, close):
        length = sum(len(memoryview(p)) for p in pieces)
        head = (f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {length}\r\n"
                f"{'Connection: close' if close else 'Connection: keep-alive'}\r\n\r\n").encode()
        if length < 64 * 1024:
            connection.sendall(head + b"".join(bytes(p) if not isinstance(p, bytes) else p
                                               for p in pieces))
        else:
            connection.sendall(head)
            for piece in pieces:
                connection.sendall(piece)


class _Reader:
    """Reads HTTP/1.1 requests from a connection (RFC 9112), within limits."""

    def __init__(self, connection):
        self._connection = connection
        self._buffer = bytearray()

    def _fill(self):
        chunk = self._connection.recv(256 * 1024)
        if not chunk:
            return False
        self._buffer += chunk
        return True

    def request(self, max_body):
        """The next request, or None when the peer closed between requests."""
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self._buffer) > MAX_HEAD:
                raise CallError(431, protocol.ERROR_HEADERS_TOO_LARGE,
                                f"the request's head is over {MAX_HEAD} bytes",
                                close=True)
            if not self._fill():
                if self._buffer.strip():
                    raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                    "the connection ended inside a request's head",
                                    close=True)
                return None
        if end > MAX_HEAD:
            raise CallError(431, protocol.ERROR_HEADERS_TOO_LARGE,
                            f"the request's head is over {MAX_HEAD} bytes",
                            close=True)
        head = bytes(self._buffer[:end])
        del self._buffer[:end + 4]
        try:
            lines = head.decode("latin-1").split("\r\n")
        except UnicodeDecodeError:
            raise CallError(400, protocol.ERROR_BAD_REQUEST, "the request's head is not text", close=True)
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[0].isalpha():
            raise CallError(400, protocol.ERROR_BAD_REQUEST,
                            f"malformed request line {lines[0][:200]!r}", close=True)
        method, target, version = parts
        if version != "HTTP/1.1":
            if version.startswith("HTTP/"):
                raise CallError(505, protocol.ERROR_BAD_REQUEST, f"{version} is not served; speak HTTP/1.1",
                                close=True)
            raise CallError(400, protocol.ERROR_BAD_REQUEST,
                            f"malformed request line {lines[0][:200]!r}", close=True)
        if len(lines) - 1 > MAX_FIELDS:
            raise CallError(431, protocol.ERROR_HEADERS_TOO_LARGE,
                            f"over {MAX_FIELDS} header fields", close=True)
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip() or " " in name:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                f"malformed header line {line[:200]!r}", close=True)
            headers[name.lower()] = value.strip()
        expect = headers.get("expect")
        if expect is not None and expect.lower() != "100-continue":
            raise CallError(417, protocol.ERROR_BAD_REQUEST, f"Expect: {expect} is not served", close=True)
        path = unquote(target.split("?", 1)[0])
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise CallError(501, protocol.ERROR_BAD_REQUEST, f"Transfer-Encoding {coding} is not served",
                                close=True)
            if expect is not None:
                self._connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            return _Request(method, path, headers, self._chunked(max_body))
        try:
            length = int(headers.get("content-length", "0"))
            if length < 0:
                raise ValueError
        except ValueError:
            raise CallError(400, protocol.ERROR_BAD_REQUEST, "Content-Length is not a length", close=True)
        if length > max_body:
            raise CallError(413, protocol.ERROR_PAYLOAD_TOO_LARGE,
                            f"the body is {length} bytes, over this node's limit of {max_body}",
                            close=True)
        if expect is not None and len(self._buffer) < length:
            self._connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        return _Request(method, path, headers, self._exactly(length))

    def _exactly(self, length):
        if len(self._buffer) >= length:
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            return body
        # A large body goes into memory nobody zeroes first, and its typed
        # arrays stay there as the method's numpy arrays (codec.decode_cbor).
        body = (np.empty(length, dtype=np.uint8) if np is not None and length >= codec.LARGE_ARRAY
                else bytearray(length))
        view = memoryview(body)
        have = len(self._buffer)
        view[:have] = self._buffer
        self._buffer.clear()
        while have < length:
            got = self._connection.recv_into(view[have:], length - have)
            if not got:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                "the connection ended inside a body", close=True)
            have += got
        return body

    def _line(self):
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 2]
                return line
            if len(self._buffer) > MAX_HEAD or not self._fill():
                raise CallError(400, protocol.ERROR_BAD_REQUEST, "a malformed chunk", close=True)

    def _chunked(self, max_body):
        body = bytearray()
        while True:
            try:
                size = int(self._line().split(b";")[0].strip(), 16)
            except ValueError:
                raise CallError(400, protocol.ERROR_BAD_REQUEST,
                                "a chunk's size is not hexadecimal", close=True)
            if size == 0:
                while self._line():  # trailers
                    pass
                return bytes(body)
            if len(body) + size > max_body:
                raise CallError(413, protocol.ERROR_PAYLOAD_TOO_LARGE,
                                f"the body is over this node's limit of {max_body} bytes", close=True)
            body += self._exactly(size)
            if self._line():
                raise CallError(400, protocol.ERROR_BAD_REQUEST, "a chunk longer than its size", close=True)


def _family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _content_type(request):
    value = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if value == codec.CBOR:
        if codec.cbor2 is None:
            raise CallError(415, protocol.ERROR_UNSUPPORTED_MEDIA_TYPE,
                            "this Python node has no cbor2 (apt-get install python3-cbor2); send JSON")
        return codec.CBOR
    if value in _JSON_TYPES:
        return codec.JSON
    raise CallError(415, protocol.ERROR_UNSUPPORTED_MEDIA_TYPE,
                    f"Content-Type {value} is neither {protocol.MEDIA_JSON} nor {protocol.MEDIA_CBOR}")


def _reply_type(request, request_type):
    accept = request.headers.get("accept", "")
    if codec.CBOR in accept and codec.cbor2 is not None:
        return codec.CBOR
    if codec.JSON in accept:
        return codec.JSON
    return request_type


def _format_name(content_type):
    return "CBOR" if content_type == codec.CBOR else "JSON"


def _cumulative(buckets):
    out, total = [], 0
    for b in buckets:
        total += b
        out.append(total)
    return out


def _resident_bytes():
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _label_value(value):
    """A label value between the quotes: \\, " and newline escaped, as the
    text format asks (prometheus_label_value in exposition.hpp)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# The order of a method's codes in lp_calls_total, as the C++ node's; any
# other is counted as protocol.CALLS_OTHER_STATUS.
_CALL_STATUSES = tuple(str(status) for status in protocol.CALLS_STATUSES)


def _prometheus(figures, node):
    """The node's own families from its metrics JSON (`figures`, with each
    method's "latency_sum": metrics(sums=True)), in the C++ node's names,
    types, help, order and numbers (printf's %.17g); `node`, the label,
    escaped.

    lp_call_duration_seconds is the C++ node's histogram: per method a
    cumulative _bucket for each bound of LATENCY_BOUNDS and +Inf, _sum (the
    calls' total time, seconds) and _count. Calls to a method the node lacks
    are method="(none)", last, once there is one; a node with no method
    shows "(none)" at 0 from the start, as C++ does, so that a scrape finds
    every node in every family of calls. Not written, for want of the
    figure: lp_batch_size (a Python node does not batch)."""
    out = []

    def family(metric):
        out.append(f"# HELP {metric.name} {metric.help}\n# TYPE {metric.name} {metric.type}\n")

    def sample(name, extra, value):
        labels = f'node="{node}"' + (f",{extra}" if extra else "")
        out.append(f"{name}{{{labels}}} {user_metrics.prometheus_number(value)}\n")

    methods = [(_label_value(m["name"]), m) for m in figures["methods"]]
    if not methods:
        none = len(LATENCY_BOUNDS) + 1
        unknown = protocol.CALLS_UNKNOWN_METHOD
        methods = [(unknown, {"name": unknown, "calls": 0, "by_code": {},
                              "latency_buckets": [0] * none, "latency_sum": 0.0,
                              "in_flight": 0, "request_bytes": 0, "reply_bytes": 0})]
    calls = protocol.METRIC_CALLS_TOTAL
    family(calls)
    for name, m in methods:
        by_code = {}
        for code, count in m["by_code"].items():
            code = code if code in _CALL_STATUSES else protocol.CALLS_OTHER_STATUS
            by_code[code] = by_code.get(code, 0) + count
        # Every method shows its 200s, at 0 too, and the unknown method its
        # 404s, which is all it answers; other codes once seen.
        shown_at_zero = "404" if m["name"] == protocol.CALLS_UNKNOWN_METHOD else "200"
        for code in _CALL_STATUSES + (protocol.CALLS_OTHER_STATUS,):
            if by_code.get(code) or code == shown_at_zero:
                sample(calls.name, f'method="{name}",code="{code}"', by_code.get(code, 0))
    duration = protocol.METRIC_CALL_DURATION_SECONDS
    family(duration)
    les = [user_metrics.prometheus_number(bound) for bound in LATENCY_BOUNDS] + ["+Inf"]
    for name, m in methods:
        for le, count in zip(les, m["latency_buckets"], strict=True):
            sample(f"{duration.name}_bucket", f'method="{name}",le="{le}"', count)
        sample(f"{duration.name}_sum", f'method="{name}"', m["latency_sum"])
        sample(f"{duration.name}_count", f'method="{name}"', m["latency_buckets"][-1])
    for metric, key in ((protocol.METRIC_CALLS_IN_FLIGHT, "in_flight"),
                        (protocol.METRIC_CALL_REQUEST_BYTES_TOTAL, "request_bytes"),
                        (protocol.METRIC_CALL_REPLY_BYTES_TOTAL, "reply_bytes")):
        family(metric)
        for name, m in methods:
            sample(metric.name, f'method="{name}"', m[key])
    for metric, key in ((protocol.METRIC_PROCESS_RESIDENT_MEMORY_BYTES, "resident_bytes"),
                        (protocol.METRIC_PROCESS_CPU_SECONDS_TOTAL, "cpu_seconds"),
                        (protocol.METRIC_PROCESS_THREADS, "threads"),
                        (protocol.METRIC_OPEN_CONNECTIONS, "connections"),
                        (protocol.METRIC_RESTARTS_TOTAL, "restarts")):
        family(metric)
        sample(metric.name, "", figures[key])
    return "".join(out)
