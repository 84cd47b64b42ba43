"""The process of one Python node: `python3 -m launchpad_client.runtime
[--check] SPEC` (launchpad_client/runtime.py says what its host gives it and
what it answers).

It imports the node's class and compares it with the C++ declaration,
builds it from the constructor's arguments (handles become peers.Peer),
restores its checkpoint, serves it (server.py), runs its run(), watches its
health, and at its end drains, saves and exits; each failure before it
serves ends it with its own exit status (protocol.toml's exit_status).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pickle
import signal
import socket
import sys
import threading
import time
import traceback
import types
import typing
from typing import Any, NoReturn

from .. import _protocol as protocol
from .._packages import cbor2
from .._wire import codec, hints, shared_memory
from .._wire.schema import CppType, from_schema
from . import checkpoint, host, malloc_tuning, peers, progress
from .methods import as_hint
from .peers import Peer
from .server import NodeServer
from .spec import Credentials, Spec

# Exit statuses the host reads: failures that a restart cannot mend, and a
# hung node's, as a C++ node process ends for one (a handler, or run()).
USAGE = protocol.EXIT_STATUS_USAGE
IMPORT_FAILED = protocol.EXIT_STATUS_IMPORT_FAILED
TYPES_DIFFER = protocol.EXIT_STATUS_TYPES_DIFFER
CONSTRUCTION_FAILED = protocol.EXIT_STATUS_CONSTRUCTION_FAILED
CHECKPOINT_UNREADABLE = protocol.EXIT_STATUS_CHECKPOINT_UNREADABLE
HUNG = protocol.EXIT_STATUS_HUNG
HUNG_RUN = protocol.EXIT_STATUS_HUNG_RUN

_CONTROL_FD = protocol.ENVIRONMENT_PYTHON_CONTROL_FD
_NODE = protocol.PYTHON_RUNTIME_NODE

# Seconds the process may take, after a stop began, beyond the calls'
# termination notice (the last save, the exit): a node whose own threads
# hold it up past that exits anyway rather than outlive a host that is gone.
STOP_GRACE = 30.0


def _fail(status: int, label: str, message: str, tail: str | None = None) -> NoReturn:
    print(f"[lp] {label}: {message}", file=sys.stderr)
    if tail:
        print(tail.rstrip(), file=sys.stderr)
    sys.stderr.flush()
    os._exit(status)


def _last_lines(text: str, count: int = 8) -> str:
    return "\n".join(text.rstrip().split("\n")[-count:])


def _import_class(spec: Spec) -> type:
    label, module_name, class_name = spec.label, spec.module, spec.class_name
    reproduce = (f"{sys.executable} -c 'import {module_name}; {module_name}.{class_name}'"
                 f" (with PYTHONPATH={os.environ.get('PYTHONPATH', '')!s})")
    try:
        module = importlib.import_module(module_name)
    except BaseException:
        _fail(IMPORT_FAILED, label, f"cannot import module {module_name!r} for the Python node; "
              f"to see why, run: {reproduce}", _last_lines(traceback.format_exc()))
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        found = sorted(n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_"))
        _fail(IMPORT_FAILED, label, f"module {module_name!r} ({getattr(module, '__file__', '?')}) "
              f"has no class {class_name!r}; its classes: {', '.join(found) or '(none)'}")
    return cls


def _check_class(spec: Spec, cls: type) -> None:
    """Every way the class differs from the C++ declaration, in one message."""
    label = spec.label
    declared = spec.declared or []
    problems = (hints.compare(declared, cls, node=label, has_run=spec.has_run)
                + checkpoint.class_problems(cls, label, spec.state_schema,
                                            [m.get("name") for m in declared]))
    if problems:
        _fail(TYPES_DIFFER, label, f"the Python class {spec.module}.{spec.class_name} does not "
              f"match the C++ declaration of {spec.service or cls.__name__}:\n  "
              + "\n  ".join(problems))


def _arguments(spec: Spec, args_cbor: bytes | None, credentials: Credentials,
               cls: type) -> list[Any]:
    """The constructor's arguments: values decoded by their schemas, as the
    types `cls.__init__`'s hints name (a struct as its dataclass), and a
    typed client of the node each handle names (a list of them for a
    std::vector of handles). A host sends them in CBOR (tensors stay
    binary); a spec written by hand gives "args" in JSON."""
    values = codec.decode_cbor(args_cbor) if args_cbor else spec.args
    wanted = _init_hints(cls)
    out: list[Any] = []
    for i, (value, schema) in enumerate(zip(values, spec.arg_schemas)):
        kind = schema.get("kind")
        if kind == protocol.KIND_HANDLE:
            out.append(Peer(spec.run_dir, value, credentials))
        elif kind == protocol.KIND_HANDLES:
            out.append([Peer(spec.run_dir, label, credentials) for label in value])
        else:
            value = from_schema(schema).from_wire(value)
            hint = wanted[i] if i < len(wanted) else None
            out.append(value if hint is None else as_hint(value, hint))
    return out


def _init_hints(cls: Any) -> list[Any]:
    """The hints of `cls.__init__`'s parameters in order, None where one has
    none (or where they cannot be read: the values then arrive as decoded)."""
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        found = typing.get_type_hints(cls.__init__, include_extras=True)
    except (TypeError, ValueError, NameError):
        return []
    return [found.get(p.name) for p in params]


def _launchpad_node(spec: Spec, args_cbor: bytes | None, credentials: Credentials) -> Any:
    """A Launchpad program's node (python/launchpad/): its definition,
    which the program's front end cloudpickled, built. Its host read it from
    the launch's own 0700 directory and sent it over the control socket;
    nothing unpickled here comes from the network. Handles in it become
    clients of their nodes as it is unpickled."""
    label = spec.label
    peers.use_credentials(credentials)
    try:
        definition = pickle.loads(codec.decode_cbor(args_cbor or b""))
    except BaseException:
        _fail(IMPORT_FAILED, label, "cannot unpickle the node's definition (is every module it "
              f"names importable by {sys.executable}, with the launching script's sys.path?)",
              _last_lines(traceback.format_exc()))
    try:
        return definition.build()
    except BaseException:
        _fail(CONSTRUCTION_FAILED, label, f"building {spec.service} raised",
              _last_lines(traceback.format_exc()))


def _control_socket(name: str) -> socket.socket:
    """The host's end of the control socket, LP_PYTHON_CONTROL_FD."""
    fd = os.environ.get(_CONTROL_FD)
    if fd is None:
        _fail(USAGE, name, f"{_NODE} is for a node that a host starts, which passes its control "
              f"socket in {_CONTROL_FD}; by hand, give the path of a spec file")
    try:
        sock = socket.socket(fileno=int(fd))
    except (OSError, ValueError) as e:
        _fail(USAGE, name, f"{_CONTROL_FD}={fd} is not a socket ({e}); the host passes "
              "one end of socketpair(AF_UNIX, SOCK_STREAM)")
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        _fail(USAGE, name, f"{_CONTROL_FD}={fd} is not an AF_UNIX stream socket; the "
              "host passes one end of socketpair(AF_UNIX, SOCK_STREAM)")
    # A process the node's code starts must not hold the host's socket open.
    sock.set_inheritable(False)
    return sock


def _receive_spec(sock: socket.socket, name: str) -> tuple[Spec, bytes, bytes]:
    """The spec the host sends first (`spec <J> <C>`, the JSON spec, the
    arguments in CBOR). Returns the spec, the arguments' bytes, and the
    bytes that came after them (the host's first lines)."""
    def broken(why: str) -> NoReturn:
        _fail(USAGE, name, f"the host sent no spec on the control socket: {why}")

    first = protocol.PYTHON_CONTROL_SPEC.encode()
    data = b""
    while b"\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            broken("it closed the socket first")
        data += chunk
        if len(data) > 100 and b"\n" not in data:
            broken(f"its first line is not `{protocol.PYTHON_CONTROL_SPEC}<J> <C>`")
    head, _, data = data.partition(b"\n")
    words = head[len(first):].split(b" ")
    if not head.startswith(first) or len(words) != 2 or not all(w.isdigit() for w in words):
        broken(f"its first line is {head[:60]!r}, not `{protocol.PYTHON_CONTROL_SPEC}<J> <C>`")
    json_size, cbor_size = int(words[0]), int(words[1])
    chunks, have = [data], len(data)
    while have < json_size + cbor_size:
        chunk = sock.recv(min(1 << 20, json_size + cbor_size - have))
        if not chunk:
            broken(f"it closed the socket after {have} of {json_size + cbor_size} bytes")
        chunks.append(chunk)
        have += len(chunk)
    data = b"".join(chunks)
    try:
        spec = Spec.of(json.loads(data[:json_size]))
    except ValueError as e:
        broken(f"its spec is no JSON ({e})")
    return spec, data[json_size:json_size + cbor_size], data[json_size + cbor_size:]


def _connect_host(label: str, sock: socket.socket, pending: bytes, end: threading.Event) -> None:
    """Makes `sock` the node's way to its host: the host's `end` and the
    control socket's end (the host is gone) set `end`."""
    def ended(lost: bool) -> None:
        if lost and not end.is_set():
            print(f"[lp] {label}: the host closed the control socket (it is gone); stopping",
                  file=sys.stderr, flush=True)
        end.set()

    host.connect(sock, ended, pending)


class _CheckpointSpec:
    def __init__(self, save: str, restore: str | None, interval_s: float,
                 state_schema: dict[str, Any] | None) -> None:
        self.save, self.restore, self.interval_s = save, restore, interval_s
        # The State of the C++ declaration's lp_save: the state crosses as a
        # C++ value of that type would.
        self.state: CppType | None = (from_schema(state_schema) if state_schema is not None
                                      else None)

    def to_bytes(self, value: Any) -> bytes:
        if self.state is None:
            return checkpoint.encode(value)
        return b"".join(codec.encode_cbor(self.state.to_wire(value, "what state() returned")))

    def from_bytes(self, data: bytes) -> Any:
        if self.state is None:
            return checkpoint.decode(data)
        try:
            value = codec.decode_cbor(data)
        except Exception as e:  # cbor2's errors vary by version
            raise ValueError(str(e) or type(e).__name__) from None
        return self.state.from_wire(value)


def _checkpoint_spec(spec: Spec, cls: type) -> _CheckpointSpec | None:
    """The spec's "checkpoint" if the class keeps checkpoints, else None."""
    raw = spec.checkpoint
    label = spec.label
    if raw is None or not checkpoint.keeps_checkpoints(cls):
        return None
    save, restore = protocol.PYTHON_SPEC_CHECKPOINT_SAVE, protocol.PYTHON_SPEC_CHECKPOINT_RESTORE
    interval = raw.get(protocol.PYTHON_SPEC_CHECKPOINT_INTERVAL_MS, 0) if isinstance(raw, dict) else None
    if (not isinstance(raw, dict) or not isinstance(raw.get(save), str) or not raw[save]
            or not isinstance(raw.get(restore), (str, type(None)))
            or not isinstance(interval, int) or isinstance(interval, bool) or interval < 0):
        _fail(USAGE, label, f"the spec's checkpoint is malformed ({json.dumps(raw)}); it is "
              '{"save": PATH, "restore": PATH or null, "interval_ms": N >= 0}')
    if cbor2 is None:
        _fail(IMPORT_FAILED, label, f"{cls.__name__} keeps checkpoints, which are CBOR, and cbor2 "
              f"is not installed for {sys.executable}: apt-get install python3-cbor2 (or "
              f"{sys.executable} -m pip install cbor2)")
    return _CheckpointSpec(raw[save], raw.get(restore) or None, interval / 1000, spec.state_schema)


def _restore(target: Any, spec: Spec, path: str, keeping: _CheckpointSpec) -> None:
    """Gives the object the state saved at `path`, if there is such a file."""
    label = spec.label
    service = spec.service or type(target).__name__
    try:
        data = checkpoint.read(path, service)
        if data is None:
            return
        try:
            value = keeping.from_bytes(data)
        except ValueError as e:
            raise checkpoint.damaged_state(path, e) from None
    except checkpoint.CheckpointError as e:
        _fail(CHECKPOINT_UNREADABLE, label, str(e))
    try:
        target.restore(value)
    except BaseException:
        _fail(CONSTRUCTION_FAILED, label, f"{spec.class_name}.restore(...) raised on the state of "
              f"the checkpoint {path}", _last_lines(traceback.format_exc()))
    print(f"[lp] {label} restored from {path}", file=sys.stderr, flush=True)


def _exit_within(seconds: float, label: str, main_done: threading.Event) -> None:
    """Ends the process `seconds` from now if it still runs: a thread of the
    node's own (not a daemon) would keep it alive after main() returned, and
    a node whose host is gone has no one left to kill it. Exit status 0 if
    the stop had ended (only such a thread was left), else 1."""
    def watch() -> None:
        time.sleep(seconds)
        print(f"[lp] {label}: still running {seconds:g} s after the stop began; exiting "
              "without waiting for the node's own threads", file=sys.stderr, flush=True)
        os._exit(0 if main_done.is_set() else 1)

    threading.Thread(target=watch, name=f"lp-{label}-exit", daemon=True).start()


def _serve(spec: Spec, target: Any, credentials: Credentials, ended: threading.Event,
           keeping: _CheckpointSpec | None, main_done: threading.Event) -> None:
    label = spec.label
    server = NodeServer(target, node=label, program=spec.program, secret=credentials.secret,
                        declared=spec.declared, service=spec.service, untyped=spec.launchpad,
                        tls=credentials.server_context(), host=spec.host,
                        max_body=spec.max_body_bytes, socket_path=spec.socket)
    server.on_stop = host.stop

    def on_term(signum: int, frame: types.FrameType | None) -> None:
        # A signal from elsewhere (a kill of this process, a supervisor that
        # signals every process of the launch) is the program's stop, as
        # for a C++ node process. Told from a thread of its own: the main
        # thread, where this runs, may be amid a line to the host.
        threading.Thread(target=host.stop, name=f"lp-{label}-signal", daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    server.start()
    if host.connected():
        host.tell(protocol.PYTHON_CONTROL_SERVING + server.url)  # its host says where it serves
    else:
        print(f"[lp] {label} serving at {server.url}", flush=True)
    saver = None
    if keeping is not None:
        # state() takes the server's call lock (None: concurrent handlers),
        # so a save waits for the call that runs, as lp_save does.
        saver = checkpoint.Saver(target, keeping.save, spec.service or type(target).__name__,
                                 label, turn=server.turn,
                                 to_bytes=keeping.to_bytes).start(keeping.interval_s)
    runner = _start_run(spec, target, ended)
    _watch_health(spec, server)

    while not ended.wait(1.0):
        pass
    notice = spec.termination_notice_s
    # run() returns before the calls drain, as a C++ node's run()s are
    # joined before its servers drain. It has as long as a C++ run() has:
    # the host bounds it (it ends this process after its termination
    # notice); a node without one gives it the notice.
    bounded = not host.connected() or host.host_lost()
    give_up = time.monotonic() + notice
    while runner is not None and runner.is_alive() and not (bounded and time.monotonic() > give_up):
        runner.join(0.2)  # in steps: the main thread takes signals between them
    _exit_within(notice + STOP_GRACE, label, main_done)
    server.drain()
    idle = server.wait_idle(notice)
    server.close()
    if saver is not None:
        saver.stop()
        if idle:
            saver.save()
        else:
            print(f"[lp] {label}: no checkpoint saved at the stop: calls still ran after "
                  f"{notice:g} s; the last saved one stands", file=sys.stderr, flush=True)


def _start_run(spec: Spec, target: Any, ended: threading.Event) -> threading.Thread | None:
    """Starts the thread of run(), if the node has one."""
    if not spec.has_run:
        return None
    label = spec.label

    def run() -> None:
        # As a C++ node's, run() starts once every node of the program serves.
        if not host.wait_for_run(ended):
            return
        progress.begin()
        try:
            # A Launchpad program's CourierNode may have no run().
            if not spec.launchpad or callable(getattr(target, "run", None)):
                target.run()
        except BaseException:
            _fail(1, label, "run() raised", _last_lines(traceback.format_exc()))
        finally:
            progress.end()
        host.tell(protocol.PYTHON_CONTROL_FINISHED)

    runner = threading.Thread(target=run, name=f"lp-{label}-run", daemon=True)
    runner.start()
    return runner


def _watch_health(spec: Spec, server: NodeServer) -> None:
    """Ends this process when the node hangs past its group's
    health_timeout, as a C++ node process's watchdog does (watchdog.hpp;
    docs/launching.md, "Hung nodes"): when a probe that takes the node's
    turn between calls has waited that long (HUNG; a node with concurrent
    handlers has no turn to take), or when run() has made no sign of
    progress that long (HUNG_RUN; until the program stops). It prints why,
    and exits at once: a hung thread cannot be joined."""
    timeout_ms = spec.health_timeout_ms
    if timeout_ms <= 0:
        return
    timeout = timeout_ms / 1000
    label = spec.label
    probing_since = [0.0]  # when the running probe began to wait; 0: none waits
    turn = server.turn

    def probe() -> None:
        assert turn is not None
        while True:
            probing_since[0] = time.monotonic()
            with turn:
                pass
            probing_since[0] = 0.0
            time.sleep(timeout / 4)

    def hung(status: int, why: str) -> None:
        print(f"[lp] node {label} hung: {why}, past its group's health_timeout of "
              f"{timeout_ms} ms; ending its process", file=sys.stderr, flush=True)
        os._exit(status)

    def watch() -> None:
        while True:
            time.sleep(timeout / 4)
            now = time.monotonic()
            since = probing_since[0]
            if since and now - since >= timeout:
                busy = server.methods_in_flight()
                hung(HUNG, f"a call waited {(now - since) * 1000:.0f} ms for its handlers "
                     f"({'calls in flight: ' + busy if busy else 'no call in flight'})")
            silence = progress.silence(now)
            if silence >= timeout and not host.stop_requested():
                hung(HUNG_RUN, "its run() made no sign of progress (a call, "
                     "launchpad_client.stop_requested(), a metric, "
                     f"launchpad_client.heartbeat()) for {silence * 1000:.0f} ms")

    if turn is not None:
        threading.Thread(target=probe, name=f"lp-{label}-probe", daemon=True).start()
    threading.Thread(target=watch, name=f"lp-{label}-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    """The node's process, from its command line: [program, (--check,)
    --node=PROGRAM/LABEL or SPEC]."""
    words = argv[1:]
    check_only = words[:1] == [protocol.PYTHON_RUNTIME_CHECK]
    if check_only:
        words = words[1:]
    if len(words) != 1:
        print(f"usage: python3 -m {protocol.PYTHON_RUNTIME_ENTRY_MODULE} "
              f"[{protocol.PYTHON_RUNTIME_CHECK}] ({_NODE}PROGRAM/LABEL | SPEC) (a launch starts "
              "it; by hand, give a spec file)", file=sys.stderr)
        return USAGE
    sock = None
    args_cbor: bytes | None = None
    pending = b""
    if words[0].startswith(_NODE):
        name = words[0][len(_NODE):]
        sock = _control_socket(name)
        spec, args_cbor, pending = _receive_spec(sock, name)
    else:
        spec = Spec.read(words[0])
    label = spec.label
    if check_only:
        # A launch of processes checks every Python class before any node
        # starts: the import and the comparison, nothing built or served.
        cls = _import_class(spec)
        _check_class(spec, cls)
        return 0
    malloc_tuning.keep_large_blocks()
    # Its process's shared memory, capped as its host's (--lp_shared_memory_mb).
    shared_memory.pool().set_cap(spec.shared_memory_bytes)
    ended = threading.Event()  # the host's `end`, or its loss; without one, a stop
    if sock is not None:
        _connect_host(label, sock, pending, ended)
    else:
        host.serve_alone(lambda lost: ended.set())
    credentials = Credentials(spec)

    keeping = None
    if spec.launchpad:
        target = _launchpad_node(spec, args_cbor, credentials)
    else:
        cls = _import_class(spec)
        _check_class(spec, cls)
        keeping = _checkpoint_spec(spec, cls)
        try:
            target = cls(*_arguments(spec, args_cbor, credentials, cls))
        except BaseException:
            _fail(CONSTRUCTION_FAILED, label, f"{spec.class_name}(...) raised",
                  _last_lines(traceback.format_exc()))

    if keeping is not None and keeping.restore:
        _restore(target, spec, keeping.restore, keeping)
    main_done = threading.Event()
    _serve(spec, target, credentials, ended, keeping, main_done)
    main_done.set()
    return 0

