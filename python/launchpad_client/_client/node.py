"""A proxy to one node, built from what the node says about itself.

`GET /lp/v1/describe` lists the node's methods with the schema of each
parameter and result; each becomes a method of the proxy that checks its
arguments (number and types) before sending, and converts the result
(_wire/schema.py). Calls go over the node's keep-alive connections
(transport.py), in CBOR when cbor2 is installed, in JSON otherwise.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import os
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any, Literal

from .. import _protocol as protocol
from .._errors import DeadlineExceeded, LaunchpadError, ProtocolError, RemoteError
from .._packages import cbor2, warn_if_missing
from .._run_directory import read_secret
from .._tls import context_of_run_dir
from .._wire import codec, schema, untyped
from .connection import Reply
from .transport import Transport

DEFAULT_TIMEOUT = 120.0  # seconds, as the C++ client's default deadline
DEFAULT_MAX_REPLY = 1 << 30  # bytes of a reply's body
# What calls are sent in, as a user chooses it (format=).
WireFormat = Literal["json", "cbor"]

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _shared_executor() -> concurrent.futures.ThreadPoolExecutor:
    """The threads that run `node.futures` calls, shared by every node: each
    call holds a thread (and a connection) while it waits for its reply."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=32, thread_name_prefix="launchpad-call")
        return _executor


def call_path(method: str) -> str:
    """The path of a call to `method`."""
    return protocol.PATH_CALL + urllib.parse.quote(method, safe="")


class MethodSpec:
    """A method as `describe` gives it, with its parameter and result types
    built from their schemas; or, for a Launchpad program's node (arity
    None), an untyped method, as Courier's: any arguments and keyword
    arguments, carried as _wire/untyped.py carries them."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.name: str = entry["name"]
        self.arity: int | None = entry["arity"]
        self.untyped = self.arity is None
        self.batched: dict[str, Any] | None = entry.get("batched")
        self.path = call_path(self.name)
        self.params: list[schema.CppType] = []
        self.result: Any = _UNTYPED_RESULT
        if not self.untyped:
            self.params, self.result = schema.method_types(entry)
        # For people: the node's spelling, else one made from the types.
        self.signature = entry.get("signature")
        if not isinstance(self.signature, str):
            self.signature = (f"{self.name}(...)" if self.untyped else
                              f"{self.result.name} {self.name}"
                              f"({', '.join(p.name for p in self.params)})")

    def arguments_to_wire(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                          cbor: bool = True) -> list[Any]:
        if self.untyped:
            wire = [untyped.to_wire(arg, f"argument {i + 1} of {self.name}", cbor)
                    for i, arg in enumerate(args)]
            if kwargs:
                if not cbor:
                    raise ValueError(f"{self.name}()'s keyword arguments ({', '.join(kwargs)}) "
                                     "go only in CBOR; connect with format='cbor'")
                wire.append(untyped.keywords_to_wire(kwargs, self.name))
            return wire
        if kwargs:
            raise TypeError(f"{self.name}() takes no keyword arguments other than timeout "
                            f"(got {', '.join(kwargs)}); its signature: {self.signature}")
        if len(args) != self.arity:
            wanted = ", ".join(p.name for p in self.params)
            plural = "" if self.arity == 1 else "s"
            raise TypeError(f"{self.name}() takes {self.arity} argument{plural} ({wanted}), "
                            f"got {len(args)}; its signature: {self.signature}")
        return [
            param.to_wire(arg, f"argument {i + 1} of {self.name}")
            for i, (param, arg) in enumerate(zip(self.params, args))
        ]

    def doc(self, node_label: str, service: str) -> str:
        text = f"{self.signature}\n\nA method of service {service}, called on node '{node_label}'."
        if self.untyped:
            text += ("\nUntyped (a Launchpad program's node): any arguments and keyword "
                     "arguments, as Courier takes them.")
        if self.batched:
            text += (f"\nBatched: the node invokes it once for up to {self.batched.get('max_batch')} "
                     f"concurrent callers, waiting at most {self.batched.get('max_wait_us')} us; "
                     "each caller passes one element and gets one result.")
        return text + "\nKeyword `timeout`: seconds for this call (default: the node's)."

    def python_signature(self) -> inspect.Signature:
        timeout = inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=None)
        if self.untyped:
            return inspect.Signature([
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL), timeout,
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        params = [
            inspect.Parameter(f"arg{i + 1}", inspect.Parameter.POSITIONAL_ONLY, annotation=p.name)
            for i, p in enumerate(self.params)
        ]
        params.append(timeout)
        return inspect.Signature(params, return_annotation=self.result.name)


class _UntypedResult:
    """The result of an untyped method, as its node sent it back."""

    name = "object"

    @staticmethod
    def from_wire(value: Any) -> Any:
        return untyped.from_wire(value, "the result")


_UNTYPED_RESULT = _UntypedResult()


class Method:
    """A remote method bound to a node: call it, or `.submit(...)` it for a
    concurrent.futures.Future."""

    def __init__(self, node: Node, spec: MethodSpec) -> None:
        self._node = node
        self._spec = spec
        self.__name__ = self.__qualname__ = spec.name
        self.__doc__ = spec.doc(node.label, node.service)
        self.__signature__ = spec.python_signature()

    def __repr__(self) -> str:
        return f"<remote method {self._spec.signature} of node '{self._node.label}'>"

    def __call__(self, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        """Calls the method and returns its result; `timeout`, seconds, as
        the node's own when None. Keyword arguments only for an untyped
        method (a Launchpad program's node)."""
        return self._node._invoke(self._spec.name, self._spec, args, timeout, True, kwargs)

    def submit(self, *args: Any, timeout: float | None = None,
               **kwargs: Any) -> concurrent.futures.Future[Any]:
        """Sends the call from a thread of the client's pool and returns a
        Future of its result. The arguments are checked and encoded now (a
        TypeError is raised here), and copied, so they may change afterwards."""
        return self._node._submit(self._spec.name, self._spec, args, timeout, True, kwargs)


class Futures:
    """`node.futures.method(args)`: the node's methods, returning
    concurrent.futures.Future objects. The same for a Node and for a Python
    node's handle of a peer: each method is the `.submit` of its own."""

    def __init__(self, node: Any) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Callable[..., concurrent.futures.Future[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        submit: Callable[..., concurrent.futures.Future[Any]] = getattr(self._node, name).submit
        return submit

    def __dir__(self) -> list[str]:
        names: list[str] = self._node.method_names()
        return names

    def call(self, method: str, *args: Any, timeout: float | None = None,
             check: bool = True) -> concurrent.futures.Future[Any]:
        """The future of `node.call(method, *args)`."""
        future: concurrent.futures.Future[Any] = self._node._submit(method, None, args, timeout,
                                                                    check)
        return future


class _Shared:
    """What copies of a Node share: the connections and the description."""

    def __init__(self, url: str, label: str | None, secret: str | None, max_reply_bytes: int,
                 wire_format: str | None, tls: ssl.SSLContext | None,
                 socket_path: str | None) -> None:
        self.transport = Transport(url, label or url, secret, max_reply_bytes, tls, socket_path)
        self.label = label or self.transport.url  # until describe says
        self.label_known = label is not None
        self.description: dict[str, Any] | None = None
        self.specs: dict[str, MethodSpec] = {}
        self.lock = threading.Lock()
        warn_if_missing(format_chosen=wire_format is not None)
        if wire_format is None:
            wire_format = "cbor" if cbor2 is not None else "json"
        if wire_format not in ("cbor", "json"):
            raise ValueError(f"format must be 'cbor' or 'json', not {wire_format!r}")
        if wire_format == "cbor" and cbor2 is None:
            raise ValueError("format='cbor' needs cbor2 (apt-get install python3-cbor2)")
        self.content_type = codec.CBOR if wire_format == "cbor" else codec.JSON


class Node:
    """A proxy to one node. Its service's methods are its attributes:

        counter = launchpad_client.connect(url, secret=...)
        counter.add(1)                       # blocks for the result
        counter.futures.add(1)               # a concurrent.futures.Future
        counter.add(1, timeout=0.5)          # DeadlineExceeded after 0.5 s
        counter.with_timeout(0.5).add(1)     # the same, as a proxy of its own

    A method whose name is also one of the proxy's own (`call`, `describe`,
    `label` ...) is reached with `node.call("name", ...)`.

    `socket_path`: the node's unix socket, for a node on this host
    (docs/protocol.md#on-one-host): the calls go there, their large arrays
    through shared memory, and over TCP where the socket cannot be reached.
    """

    def __init__(self, url: str, secret: str | None = None, *, label: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_reply_bytes: int = DEFAULT_MAX_REPLY,
                 format: WireFormat | None = None, tls: ssl.SSLContext | None = None,
                 socket_path: str | None = None) -> None:
        self._shared = _Shared(url, label, secret, max_reply_bytes, format, tls, socket_path)
        self.timeout = float(timeout)
        self.futures = Futures(self)

    # --- What the node is. -------------------------------------------------

    @property
    def url(self) -> str:
        """The node's address, as http(s)://host:port."""
        url: str = self._shared.transport.url
        return url

    @property
    def label(self) -> str:
        """The node's label: given by attach(), else what the node says."""
        return self._shared.label

    @property
    def service(self) -> str:
        """The name of the node's service (its C++ struct, or Python class)."""
        service: str = self.describe()["service"]
        return service

    @property
    def program(self) -> str:
        """The name of the program the node belongs to."""
        program: str = self.describe()["program"]
        return program

    @property
    def format(self) -> WireFormat:
        """'cbor' or 'json': what calls are sent in."""
        return "cbor" if self._shared.content_type == codec.CBOR else "json"

    def __repr__(self) -> str:
        service = self._shared.description["service"] if self._shared.description else "?"
        return f"<launchpad_client.Node {self.label} ({service}) at {self.url}>"

    def describe(self, refresh: bool = False) -> dict[str, Any]:
        """The node's `GET /lp/v1/describe` answer (fetched once, then kept)."""
        shared = self._shared
        with shared.lock:
            if shared.description is not None and not refresh:
                return shared.description
        if refresh:  # methods made from the old description go
            for name in [n for n, v in vars(self).items() if isinstance(v, Method)]:
                del self.__dict__[name]
        reply = shared.transport.request("GET", protocol.PATH_DESCRIBE, accept=codec.JSON,
                                         timeout=self.timeout)
        body = self._body(reply, "")
        if not (isinstance(body, dict) and isinstance(body.get("methods"), list)):
            raise ProtocolError(shared.label, "", "the describe reply has no list of methods")
        if body.get("protocol", protocol.WIRE_VERSION) != protocol.WIRE_VERSION:
            raise ProtocolError(shared.label, "", f"the node speaks protocol {body['protocol']}; "
                                f"this client speaks protocol {protocol.WIRE_VERSION}")
        try:
            specs = {entry["name"]: MethodSpec(entry) for entry in body["methods"]}
        except (KeyError, TypeError, schema.BadSchema) as e:
            raise ProtocolError(shared.label, "", f"a method in the describe reply is malformed: {e}") from None
        with shared.lock:
            shared.description = body
            shared.specs = specs
            if not shared.label_known and isinstance(body.get("node"), str):
                shared.label = shared.transport.label = body["node"]
                shared.label_known = True
        return body

    def method_names(self) -> list[str]:
        """The names of the node's methods, from its description."""
        self.describe()
        return list(self._shared.specs)

    def health(self) -> str:
        """'serving', or 'stopping' while the node drains (no secret needed)."""
        reply = self._shared.transport.request("GET", protocol.PATH_HEALTH, accept=codec.JSON,
                                               timeout=self.timeout)
        body = self._decode(reply, "")
        if isinstance(body, dict) and body.get("status") in (protocol.HEALTH_SERVING,
                                                             protocol.HEALTH_STOPPING):
            status: str = body["status"]
            return status
        raise ProtocolError(self.label, "", f"the health reply is {body!r}")

    # --- Calls. -------------------------------------------------------------

    def __getattr__(self, name: str) -> Method:
        if name.startswith("_"):
            raise AttributeError(name)
        self.describe()
        spec = self._shared.specs.get(name)
        if spec is None:
            known = ", ".join(self._shared.specs) or "(none)"
            raise AttributeError(f"node '{self.label}' (service {self.service}) has no method "
                                 f"'{name}'; its methods: {known}")
        method = Method(self, spec)
        self.__dict__[name] = method  # found without __getattr__ from now on
        return method

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        if self._shared.description is not None:
            names.update(self._shared.specs)
        return sorted(names)

    def with_timeout(self, seconds: float) -> Node:
        """A copy of this proxy, sharing its connections, whose calls give up
        after `seconds` with DeadlineExceeded."""
        copy = Node.__new__(Node)
        copy._shared = self._shared
        copy.timeout = float(seconds)
        copy.futures = Futures(copy)
        return copy

    def call(self, method: str, *args: Any, timeout: float | None = None, check: bool = True) -> Any:
        """Calls `method` by name. With check=False the arguments go as given,
        unchecked, even to a method the node did not describe (to test a
        node's own checks)."""
        spec = self._spec(method, check)
        return self._invoke(method, spec, args, timeout, check)

    def close(self) -> None:
        """Closes the idle connections; the proxy opens new ones if used again."""
        self._shared.transport.close()

    def __enter__(self) -> Node:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop_program(self) -> None:
        """Asks the program this node belongs to to stop (POST stop, with
        the secret): as lp::stop() does inside it."""
        reply = self._shared.transport.request(
            "POST", protocol.PATH_STOP, [b"{}"], content_type=codec.JSON, accept=codec.JSON,
            timeout=self.timeout)
        self._body(reply, "")

    def _spec(self, method: str, check: bool) -> MethodSpec | None:
        if not check:
            # Unchecked arguments of an untyped method go, and its result
            # comes back, as they are (a Launchpad handle converts both).
            found = self._shared.specs.get(method)
            return None if found is None or found.untyped else found
        self.describe()
        spec = self._shared.specs.get(method)
        if spec is None:
            getattr(self, method)  # raises the AttributeError that lists the methods
        return spec

    def _encode(self, method: str, spec: MethodSpec | None, args: tuple[Any, ...],
                check: bool, kwargs: dict[str, Any] | None = None) -> codec.Pieces:
        if check and spec is not None:
            wire = spec.arguments_to_wire(args, kwargs or {},
                                          self._shared.content_type == codec.CBOR)
        else:
            wire = schema.plain(list(args))
        try:
            return codec.encode(wire, self._shared.content_type)
        except codec.EncodeError as e:
            raise ValueError(f"the arguments of {method} cannot be sent: {e}") from None

    def _invoke(self, method: str, spec: MethodSpec | None, args: tuple[Any, ...],
                timeout: float | None, check: bool, kwargs: dict[str, Any] | None = None) -> Any:
        pieces = self._encode(method, spec, args, check, kwargs)
        return self._send(method, spec, pieces, timeout)

    def _submit(self, method: str, spec: MethodSpec | None, args: tuple[Any, ...],
                timeout: float | None, check: bool,
                kwargs: dict[str, Any] | None = None) -> concurrent.futures.Future[Any]:
        if check and spec is None:
            spec = self._spec(method, check)
        # The caller may change its arrays once this returns: send copies.
        pieces = [p if isinstance(p, bytes) else bytes(p)
                  for p in self._encode(method, spec, args, check, kwargs)]
        return _shared_executor().submit(self._send, method, spec, pieces, timeout)

    def _send(self, method: str, spec: MethodSpec | None, pieces: codec.Pieces,
              timeout: float | None) -> Any:
        content_type = self._shared.content_type
        path = spec.path if spec is not None else call_path(method)

        def decoded(reply: Reply) -> Any:
            return self._body(reply, method)

        # Decoded while the reply's connection, and the shared memory it
        # brought, are this call's alone (transport.py).
        body = self._shared.transport.read(
            "POST", path, decoded, pieces,
            content_type=content_type, accept=content_type,
            timeout=self.timeout if timeout is None else timeout, method=method)
        if not (isinstance(body, dict) and "result" in body):
            raise ProtocolError(self.label, method,
                                f"the reply is not {{\"result\": ...}}: {schema.describe_value(body)}")
        result = body["result"]
        if spec is None:
            return result
        try:
            return spec.result.from_wire(result)
        except ValueError as e:
            if not spec.untyped:
                raise
            raise ProtocolError(self.label, method, str(e)) from None

    # --- Replies. -----------------------------------------------------------

    def _decode(self, reply: Reply, method: str) -> Any:
        """The value of a reply's body; ProtocolError if it is not JSON or
        CBOR, or does not decode."""
        media = reply.content_type.split(";")[0].strip().lower()
        if media not in (codec.JSON, codec.CBOR):
            snippet = bytes(reply.body[:60])
            raise ProtocolError(
                self.label, method,
                f"HTTP {reply.status} with Content-Type {reply.content_type or '(none)'!r}, not JSON "
                f"or CBOR (body starts {snippet!r}): is {self.url} a Launchpad node?")
        if media == codec.CBOR and cbor2 is None:
            raise ProtocolError(self.label, method, "the node answered in CBOR, which needs cbor2 "
                                "(apt-get install python3-cbor2)")
        try:
            return codec.decode(reply.body, media, reply.segments)
        except (ValueError, RecursionError, EOFError) as e:
            raise ProtocolError(self.label, method,
                                f"the reply's body is not valid {media.split('/')[1].upper()}: {e}") from None

    def _body(self, reply: Reply, method: str) -> Any:
        """The decoded body of a 200 reply; RemoteError for an error reply."""
        body = self._decode(reply, method)
        if reply.status == 200:
            return body
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            if reply.status == 504 and error["code"] == protocol.ERROR_DEADLINE_EXCEEDED:
                # The method gave up at this call's deadline (Lp-Deadline-Ms).
                raise DeadlineExceeded(error.get("node") or self.label, error.get("method") or method,
                                       str(error.get("message", "")))
            raise RemoteError(error.get("node") or self.label, error.get("method") or method,
                              error["code"], str(error.get("message", "")), reply.status)
        raise ProtocolError(self.label, method, f"HTTP {reply.status} with a body that is not a "
                            f"Launchpad error: {schema.describe_value(body)}")


def connect(url: str, secret: str | None = None, *, run_dir: str | os.PathLike[str] | None = None,
            timeout: float = DEFAULT_TIMEOUT, max_reply_bytes: int = DEFAULT_MAX_REPLY,
            format: WireFormat | None = None,
            tls: ssl.SSLContext | None = None) -> Node:
    """A proxy to the node at `url` (e.g. http://127.0.0.1:40123), with its
    methods from the node's description, which this fetches now.

    `secret` is the launch's secret; or give `run_dir`, the launch's run
    directory, to read it from its `secret` file. `timeout`: seconds each call
    may take (120, as in C++). `max_reply_bytes`: a larger reply raises
    ReplyTooLarge unread. `format`: 'cbor' (the default when cbor2 is
    installed) or 'json'. `tls`: for an https:// node, an ssl.SSLContext
    (tls_context()); by default the one of `run_dir`'s tls.crt and tls.key.
    """
    if run_dir is not None:
        if secret is None:
            secret = read_secret(run_dir)
        if tls is None:
            tls = context_of_run_dir(run_dir)
    node = Node(url, secret, timeout=timeout, max_reply_bytes=max_reply_bytes, format=format,
                tls=tls)
    try:
        node.describe()
    except LaunchpadError:
        node.close()
        raise
    return node
