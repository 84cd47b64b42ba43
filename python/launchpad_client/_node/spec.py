"""A Python node's spec: the JSON its host sends it first (or a file, by
hand), read once into a typed value (launchpad_client/runtime.py describes
each key; protocol.toml spells them for the host and for this reader), and
the launch's credentials it holds."""

from __future__ import annotations

import dataclasses
import json
import os
import ssl
import threading
from typing import Any

from .. import _protocol as protocol
from .._tls import server_context_of_pem, tls_context_of_pem

DEFAULT_MAX_BODY = 256 * 1024 * 1024  # bytes of a request's body, as a C++ node's default
DEFAULT_TERMINATION_NOTICE = 10.0  # seconds
DEFAULT_SHARED_MEMORY = 256 * 1024 * 1024  # bytes, as --lp_shared_memory_mb's default


@dataclasses.dataclass
class Spec:
    """What a node's host says of it."""

    label: str
    module: str
    class_name: str
    program: str
    service: str | None
    declared: list[dict[str, Any]] | None  # describe's methods of the C++ declaration
    args: list[Any]  # by hand: the constructor's arguments, in JSON (a host sends CBOR)
    arg_schemas: list[dict[str, Any]]
    secret: str | None  # None: --lp_insecure
    tls: dict[str, str] | None  # the launch's PEM credentials; None: plain HTTP
    run_dir: str | None  # by hand: where handles find their nodes
    host: str
    socket: str | None  # where it serves too, a unix socket; None: TCP alone
    has_run: bool | None  # None: not compared
    termination_notice_s: float
    max_body_bytes: int
    shared_memory_bytes: int  # its process pool's cap (--lp_shared_memory_mb); 0: none
    health_timeout_ms: int
    state_schema: dict[str, Any] | None
    checkpoint: Any  # checked where it is used: {"save", "restore", "interval_ms"}
    launchpad: bool = False  # a Launchpad program's node: its arguments are its definition

    @staticmethod
    def read(path: str | os.PathLike[str]) -> Spec:
        with open(path, encoding="utf-8") as f:
            return Spec.of(json.load(f))

    @staticmethod
    def of(raw: dict[str, Any]) -> Spec:
        return Spec(
            label=raw[protocol.PYTHON_SPEC_NODE],
            module=raw[protocol.PYTHON_SPEC_MODULE_NAME],
            class_name=raw[protocol.PYTHON_SPEC_CLASS_NAME],
            program=raw.get(protocol.PYTHON_SPEC_PROGRAM, ""),
            service=raw.get(protocol.PYTHON_SPEC_SERVICE),
            declared=raw.get(protocol.PYTHON_SPEC_DECLARED),
            args=raw.get(protocol.PYTHON_SPEC_ARGS, []),
            arg_schemas=raw.get(protocol.PYTHON_SPEC_ARG_SCHEMAS, []),
            secret=raw.get(protocol.PYTHON_SPEC_SECRET) or None,
            tls=raw.get(protocol.PYTHON_SPEC_TLS) or None,
            run_dir=raw.get(protocol.PYTHON_SPEC_RUN_DIR),
            host=raw.get(protocol.PYTHON_SPEC_HOST, "127.0.0.1"),
            socket=raw.get(protocol.PYTHON_SPEC_SOCKET) or None,
            has_run=raw.get(protocol.PYTHON_SPEC_HAS_RUN),
            termination_notice_s=float(raw.get(protocol.PYTHON_SPEC_TERMINATION_NOTICE_S,
                                               DEFAULT_TERMINATION_NOTICE)),
            max_body_bytes=raw.get(protocol.PYTHON_SPEC_MAX_BODY_BYTES, DEFAULT_MAX_BODY),
            shared_memory_bytes=int(raw.get(protocol.PYTHON_SPEC_SHARED_MEMORY_BYTES,
                                            DEFAULT_SHARED_MEMORY)),
            health_timeout_ms=raw.get(protocol.PYTHON_SPEC_HEALTH_TIMEOUT_MS) or 0,
            state_schema=raw.get(protocol.PYTHON_SPEC_STATE_SCHEMA),
            checkpoint=raw.get(protocol.PYTHON_SPEC_CHECKPOINT),
            launchpad=bool(raw.get(protocol.PYTHON_SPEC_LAUNCHPAD, False)),
        )


class Credentials:
    """The launch's secret and TLS credentials, as the spec gives them."""

    def __init__(self, spec: Spec) -> None:
        self.secret = spec.secret
        self._tls = spec.tls
        self._client: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def _authority(self) -> str:
        assert self._tls is not None
        return (self._tls.get(protocol.PYTHON_SPEC_TLS_AUTHORITY)
                or self._tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE])

    def server_context(self) -> ssl.SSLContext | None:
        """The node's own TLS, as a C++ node's: TLS 1.3, and a peer must
        present a certificate the launch's authority signed."""
        if self._tls is None:
            return None
        return server_context_of_pem(self._authority(),
                                     self._tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE],
                                     self._tls[protocol.PYTHON_SPEC_TLS_KEY])

    def client_context(self) -> ssl.SSLContext | None:
        """The TLS of its calls to other nodes; one, shared."""
        if self._tls is None:
            return None
        with self._lock:
            if self._client is None:
                self._client = tls_context_of_pem(
                    self._authority(), self._tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE],
                    self._tls[protocol.PYTHON_SPEC_TLS_KEY])
            return self._client
