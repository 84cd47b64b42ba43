"""One Python node of a program:

    python3 -m launchpad_client.runtime [--check] --node=PROGRAM/LABEL
    python3 -m launchpad_client.runtime [--check] SPEC

(`--check` only imports the class and compares it with its C++
declaration, with the exit statuses below: a launch of processes does that
for every Python node before it starts any.)

The process that hosts a Python node (its launch's node process, or the
launcher itself under the thread policies) starts the first form, with the
environment variable LP_PYTHON_CONTROL_FD: one end of a connected AF_UNIX
stream socket (socketpair) to its host. `--node` only names the node for
`ps`. The host sends the spec first, over that socket: a line
`spec <J> <C>`, then J bytes of JSON, the spec, then C bytes of CBOR, the
constructor's arguments (an array; tensors stay binary). Nothing of it is
written to a file: the spec holds the launch's secret and TLS key, which
are in the launch's run directory and nowhere else. By hand, the second
form reads the spec from a JSON file, with the arguments in it ("args") and
no host:

    {"node": "learner", "program": "demo", "service": "Learner",
     "module": "learner", "class": "Learner",
     "declared": [...],          # describe's "methods" of the C++ declaration
     "args": [...],              # by hand: the constructor's arguments, in JSON
     "arg_schemas": [...],       # their schemas; {"kind": "handle"} for a handle's label,
                                 # {"kind": "handles"} for a list of labels
     "secret": "0f3c...",        # the launch's secret; absent: --lp_insecure
     "tls": {"certificate": PEM, "key": PEM, "authority": PEM},  # absent: plain HTTP
     "run_dir": "/tmp/lp-demo-XXXXXX",   # by hand: its nodes file finds the handles' nodes
     "host": "127.0.0.1",
     "has_run": true,            # C++ declares `void run();`
     "termination_notice_s": 10, # how long calls that run at a stop may take (optional)
     "max_body_bytes": 268435456,  # the largest request body it reads (optional)
     "health_timeout_ms": 60000, # its group's health_timeout where its host watches
                                 # health (a launcher's node process); optional
     "checkpoint": {"save": "/ckpt/learner.ckpt", "restore": "/ckpt/learner.ckpt" or null,
                    "interval_ms": 30000}}   # optional; 0: saved at stop only

After the spec, the control socket carries lines of UTF-8 text both ways.
The node writes:

    serving <url>      the node serves (the host publishes the address)
    finished           run() returned
    stop               the node asks the program to stop (launchpad_client.stop(),
                       or SIGTERM or SIGINT sent to its process)
    follow             a peer refused a call because the program stops: the
                       node stops with it, without claiming the stop
    address <label>    where does node <label> serve? (a handle's first use, and
                       after its node stopped answering)

and the host writes:

    run                every node of the program serves: run() starts, as a
                       C++ node's does
    stop               the program stops: stop_requested() is true from now on
                       (the host writes it when its C++ nodes see their stop)
    end                drain the calls, save the checkpoint and exit: the host's
                       runs have returned (run() is waited for first, if not)

and answers each `address` request, one at a time, with one line:

    address <label> <url>
    address <label> - <why there is none>

When the socket ends (the host is gone) the node ends as at `end`, so
that it never outlives its host. A node started by hand has no host: a
handle finds its node in the run directory's nodes file, and a stop
(SIGTERM, SIGINT, launchpad_client.stop()) ends the node. LP_TUNE_MALLOC=1,
unless the launch has --lp_system_malloc, asks it to tune glibc's malloc as
a C++ node's process does (malloc_tuning.py).

Before anything serves it imports the module, finds the class and compares
it with the C++ declaration: its methods' type hints (hints.compare), run()
against has_run, and its checkpoint methods (both state() and
restore(value), or neither). Each failure ends the process with its own exit
status and a message that says what to do. A class that keeps checkpoints,
given a "checkpoint" in its spec, restores its state from "restore" (a
missing file: it starts empty) before it serves, and saves it to "save"
every interval_ms and when it ends (checkpoint.py). At its end (the host's
`end`, or its loss) it waits for run() to return, stops taking calls, lets
the running ones end, saves, and exits 0. Given a health_timeout_ms, it
ends itself as a C++ node process does when its node hangs (_watch_health),
with the status its launcher reads: its host ends with the same.
"""

import importlib
import inspect
import json
import os
import signal
import socket
import sys
import ssl
import threading
import time
import traceback
import typing

from . import _protocol as protocol
from . import checkpoint, codec, hints, malloc_tuning, node_context, progress, run_directory, tls
from .errors import DeadlineExceeded, RemoteError, TransportError
from .node import Node
from .optional_packages import cbor2
from .schema import from_schema
from . import server as server_module
from .server import NodeServer

# Exit statuses the host reads: failures that a restart cannot mend.
USAGE = protocol.EXIT_STATUS_USAGE  # no spec, a malformed one, or no control socket where the host said
IMPORT_FAILED = protocol.EXIT_STATUS_IMPORT_FAILED
TYPES_DIFFER = protocol.EXIT_STATUS_TYPES_DIFFER
CONSTRUCTION_FAILED = protocol.EXIT_STATUS_CONSTRUCTION_FAILED
CHECKPOINT_UNREADABLE = protocol.EXIT_STATUS_CHECKPOINT_UNREADABLE
# A hung node, as a C++ node process ends for one (launch_state.hpp): a
# handler, or run().
HUNG = protocol.EXIT_STATUS_HUNG
HUNG_RUN = protocol.EXIT_STATUS_HUNG_RUN

# Seconds the process may take, after a stop began, beyond the calls'
# termination notice (the last save, the exit): a node whose own threads
# hold it up past that exits anyway rather than outlive a host that is gone.
STOP_GRACE = 30.0


def _fail(status, label, message, tail=None):
    print(f"[lp] {label}: {message}", file=sys.stderr)
    if tail:
        print(tail.rstrip(), file=sys.stderr)
    sys.stderr.flush()
    os._exit(status)


def _last_lines(text, count=8):
    return "\n".join(text.rstrip().split("\n")[-count:])


def _import_class(spec):
    label = spec[protocol.PYTHON_SPEC_NODE]
    module_name, class_name = spec[protocol.PYTHON_SPEC_MODULE_NAME], spec[protocol.PYTHON_SPEC_CLASS_NAME]
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


def _check_class(spec, cls):
    """Every way the class differs from the C++ declaration, in one message."""
    label = spec[protocol.PYTHON_SPEC_NODE]
    declared = spec.get(protocol.PYTHON_SPEC_DECLARED) or []
    problems = (hints.compare(declared, cls, node=label, has_run=spec.get(protocol.PYTHON_SPEC_HAS_RUN))
                + checkpoint.class_problems(cls, label, spec.get(protocol.PYTHON_SPEC_STATE_SCHEMA),
                                            [m.get("name") for m in declared]))
    if problems:
        module_name = spec[protocol.PYTHON_SPEC_MODULE_NAME]
        class_name = spec[protocol.PYTHON_SPEC_CLASS_NAME]
        _fail(TYPES_DIFFER, label, f"the Python class {module_name}.{class_name} does not "
              f"match the C++ declaration of {spec.get(protocol.PYTHON_SPEC_SERVICE, cls.__name__)}:\n  "
              + "\n  ".join(problems))


def _arguments(spec, args_cbor, credentials, cls):
    """The constructor's arguments: values decoded by their schemas, as the
    types `cls.__init__`'s hints name (a struct as its dataclass), and a
    typed client of the node each handle names (a list of them for a
    std::vector of handles). A host sends them in CBOR (tensors stay
    binary); a spec written by hand gives "args" in JSON."""
    values = codec.decode_cbor(args_cbor) if args_cbor else spec.get(protocol.PYTHON_SPEC_ARGS, [])
    wanted = _init_hints(cls)
    out = []
    for i, (value, schema) in enumerate(zip(values, spec.get(protocol.PYTHON_SPEC_ARG_SCHEMAS, []))):
        kind = schema.get("kind")
        if kind == protocol.KIND_HANDLE:
            out.append(_Peer(spec, value, credentials))
        elif kind == protocol.KIND_HANDLES:
            out.append([_Peer(spec, label, credentials) for label in value])
        else:
            value = from_schema(schema).from_wire(value)
            hint = wanted[i] if i < len(wanted) else None
            out.append(value if hint is None else server_module.as_hint(value, hint))
    return out


def _init_hints(cls):
    """The hints of `cls.__init__`'s parameters in order, None where one has
    none (or where they cannot be read: the values then arrive as decoded)."""
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        hints = typing.get_type_hints(cls.__init__, include_extras=True)
    except (TypeError, ValueError, NameError):
        return []
    return [hints.get(p.name) for p in params]


class _Credentials:
    """The launch's secret and TLS credentials, from the spec."""

    def __init__(self, spec):
        self.secret = spec.get(protocol.PYTHON_SPEC_SECRET) or None
        self.tls = spec.get(protocol.PYTHON_SPEC_TLS) or None
        self._client = None
        self._lock = threading.Lock()

    def server_context(self):
        """The node's own TLS, as a C++ node's: TLS 1.3, and a peer must
        present a certificate the launch's authority signed."""
        if self.tls is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=self._authority())
        tls.load_pem_chain(context, self.tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE],
                           self.tls[protocol.PYTHON_SPEC_TLS_KEY])
        return context

    def client_context(self):
        """The TLS of its calls to other nodes; one, shared."""
        if self.tls is None:
            return None
        with self._lock:
            if self._client is None:
                self._client = tls.tls_context_of_pem(
                    self._authority(), self.tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE],
                    self.tls[protocol.PYTHON_SPEC_TLS_KEY])
            return self._client

    def _authority(self):
        # The site's CA the launch was given, else its own certificate.
        return (self.tls.get(protocol.PYTHON_SPEC_TLS_AUTHORITY)
                or self.tls[protocol.PYTHON_SPEC_TLS_CERTIFICATE])


class _Peer:
    """A handle of another node: a typed client, connected on first use
    (the node may not serve yet when this one is built). Its address comes
    from the host; a call that finds no one there (the node restarted
    elsewhere) makes the next one ask again."""

    def __init__(self, spec, label, credentials):
        self._spec, self._label, self._credentials = spec, label, credentials
        self._node = None
        self._lock = threading.Lock()

    def _connect(self):
        with self._lock:
            if self._node is None:
                self._node = Node(self._address(), self._credentials.secret,
                                  label=self._label, tls=self._credentials.client_context())
            return self._node

    def _address(self):
        if node_context.connected():
            return node_context.address(self._label)
        run_dir = self._spec.get(protocol.PYTHON_SPEC_RUN_DIR)
        if not run_dir:
            raise LookupError(f"no address for node {self._label!r}: a node started by hand "
                              'finds it in its run directory\'s nodes file (the spec\'s "run_dir")')
        give_up = time.monotonic() + 30
        while True:
            url = run_directory.node_addresses(run_dir).get(self._label)
            if url:
                return url
            if time.monotonic() > give_up:
                raise LookupError(f"no address for node {self._label!r} in {run_dir}/nodes "
                                  "within 30 s")
            time.sleep(0.02)

    def _forget_if_gone(self, node, error):
        # A deadline says the node is slow, not gone: its address stands.
        if not isinstance(error, TransportError) or isinstance(error, DeadlineExceeded):
            return
        with self._lock:
            if self._node is node:
                self._node = None
        node.close()

    def _use(self, action):
        # From run(), a call is a sign of progress, and alive while it waits.
        with progress.waiting:
            node = self._connect()
            try:
                return action(node)
            except TransportError as e:
                self._forget_if_gone(node, e)
                raise
            except RemoteError as e:
                _follow_if_stopping(e)
                raise

    def _submit(self, action):
        progress.sign()
        node = self._connect()
        try:
            future = action(node)
        except TransportError as e:
            self._forget_if_gone(node, e)
            raise
        def done(f):
            if not f.cancelled():
                self._forget_if_gone(node, f.exception())
                _follow_if_stopping(f.exception())

        future.add_done_callback(done)
        return future

    @property
    def futures(self):
        return _PeerFutures(self)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._use(lambda node: getattr(node, name))
        return _PeerMethod(self, name) if callable(value) else value


def _follow_if_stopping(error):
    # A peer that refuses a call for stopping says that the program stops,
    # as a C++ node learns it from the same refusal.
    if isinstance(error, RemoteError) and error.code == protocol.ERROR_STOPPING:
        node_context.follow_stop()


class _PeerMethod:
    """A method of a peer, found by name on each call, so that a call after
    the node moved goes to where it is now."""

    def __init__(self, peer, name):
        self._peer, self._name = peer, name

    def __call__(self, *args, **kwargs):
        return self._peer._use(lambda node: getattr(node, self._name)(*args, **kwargs))

    def submit(self, *args, **kwargs):
        return self._peer._submit(lambda node: getattr(node, self._name).submit(*args, **kwargs))


class _PeerFutures:
    def __init__(self, peer):
        self._peer = peer

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._peer._submit(
            lambda node: getattr(node.futures, name)(*args, **kwargs))


def _control_socket(name):
    """The host's end of the control socket, LP_PYTHON_CONTROL_FD."""
    variable = protocol.ENVIRONMENT_PYTHON_CONTROL_FD
    fd = os.environ.get(variable)
    if fd is None:
        _fail(USAGE, name, f"{protocol.PYTHON_RUNTIME_NODE} is for a node that a host starts, which "
              f"passes its control socket in {variable}; by hand, give the path of a spec file")
    try:
        sock = socket.socket(fileno=int(fd))
    except (OSError, ValueError) as e:
        _fail(USAGE, name, f"{variable}={fd} is not a socket ({e}); the host passes "
              "one end of socketpair(AF_UNIX, SOCK_STREAM)")
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        _fail(USAGE, name, f"{variable}={fd} is not an AF_UNIX stream socket; the "
              "host passes one end of socketpair(AF_UNIX, SOCK_STREAM)")
    # A process the node's code starts must not hold the host's socket open.
    sock.set_inheritable(False)
    return sock


def _receive_spec(sock, name):
    """The spec the host sends first (`spec <J> <C>`, the JSON spec, the
    arguments in CBOR). Returns the spec, the arguments' bytes, and the
    bytes that came after them (the host's first lines)."""
    def broken(why):
        _fail(USAGE, name, f"the host sent no spec on the control socket: {why}")

    data = b""
    while b"\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            broken("it closed the socket first")
        data += chunk
        if len(data) > 100 and b"\n" not in data:
            broken("its first line is not `spec <J> <C>`")
    head, _, data = data.partition(b"\n")
    words = head.split(b" ")
    if (len(words) != 3 or words[0] != protocol.PYTHON_CONTROL_SPEC.strip().encode()
            or not all(w.isdigit() for w in words[1:])):
        broken(f"its first line is {head[:60]!r}, not `spec <J> <C>`")
    json_size, cbor_size = int(words[1]), int(words[2])
    chunks, have = [data], len(data)
    while have < json_size + cbor_size:
        chunk = sock.recv(min(1 << 20, json_size + cbor_size - have))
        if not chunk:
            broken(f"it closed the socket after {have} of {json_size + cbor_size} bytes")
        chunks.append(chunk)
        have += len(chunk)
    data = b"".join(chunks)
    try:
        spec = json.loads(data[:json_size])
    except ValueError as e:
        broken(f"its spec is no JSON ({e})")
    return spec, data[json_size:json_size + cbor_size], data[json_size + cbor_size:]


def _connect_host(label, sock, pending, end):
    """Makes `sock` the node's way to its host: the host's `end` and the
    control socket's end (the host is gone) set `end`."""
    def ended(lost):
        if lost and not end.is_set():
            print(f"[lp] {label}: the host closed the control socket (it is gone); stopping",
                  file=sys.stderr, flush=True)
        end.set()

    node_context.connect(sock, ended, pending)


class _CheckpointSpec:
    def __init__(self, save, restore, interval_s, state_schema):
        self.save, self.restore, self.interval_s = save, restore, interval_s
        # The State of the C++ declaration's lp_save: the state crosses as a
        # C++ value of that type would.
        self.state = from_schema(state_schema) if state_schema is not None else None

    def to_bytes(self, value):
        if self.state is None:
            return checkpoint.encode(value)
        return b"".join(codec.encode_cbor(self.state.to_wire(value, "what state() returned")))

    def from_bytes(self, data):
        if self.state is None:
            return checkpoint.decode(data)
        try:
            value = codec.decode_cbor(data)
        except Exception as e:  # cbor2's errors vary by version
            raise ValueError(str(e) or type(e).__name__) from None
        return self.state.from_wire(value)


def _checkpoint_spec(spec, cls):
    """The spec's "checkpoint" if the class keeps checkpoints, else None."""
    raw = spec.get(protocol.PYTHON_SPEC_CHECKPOINT)
    label = spec[protocol.PYTHON_SPEC_NODE]
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
    return _CheckpointSpec(raw[save], raw.get(restore) or None, interval / 1000,
                           spec.get(protocol.PYTHON_SPEC_STATE_SCHEMA))


def _restore(target, spec, path, keeping):
    """Gives the object the state saved at `path`, if there is such a file."""
    label = spec[protocol.PYTHON_SPEC_NODE]
    service = spec.get(protocol.PYTHON_SPEC_SERVICE, type(target).__name__)
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
        _fail(CONSTRUCTION_FAILED, label, f"{spec[protocol.PYTHON_SPEC_CLASS_NAME]}.restore(...) raised on "
              f"the state of the checkpoint {path}", _last_lines(traceback.format_exc()))
    print(f"[lp] {label} restored from {path}", file=sys.stderr, flush=True)


def _exit_within(seconds, label, main_done):
    """Ends the process `seconds` from now if it still runs: a thread of the
    node's own (not a daemon) would keep it alive after main() returned, and
    a node whose host is gone has no one left to kill it. Exit status 0 if
    the stop had ended (only such a thread was left), else 1."""
    def watch():
        time.sleep(seconds)
        print(f"[lp] {label}: still running {seconds:g} s after the stop began; exiting "
              "without waiting for the node's own threads", file=sys.stderr, flush=True)
        os._exit(0 if main_done.is_set() else 1)

    threading.Thread(target=watch, name=f"lp-{label}-exit", daemon=True).start()


def _serve(spec, target, credentials, ended, keeping, main_done):
    label = spec[protocol.PYTHON_SPEC_NODE]
    server = NodeServer(target, node=label, program=spec.get(protocol.PYTHON_SPEC_PROGRAM, ""),
                        secret=credentials.secret,
                        declared=spec.get(protocol.PYTHON_SPEC_DECLARED),
                        service=spec.get(protocol.PYTHON_SPEC_SERVICE),
                        tls=credentials.server_context(),
                        host=spec.get(protocol.PYTHON_SPEC_HOST, "127.0.0.1"),
                        max_body=spec.get(protocol.PYTHON_SPEC_MAX_BODY_BYTES,
                                          server_module.DEFAULT_MAX_BODY))
    server.on_stop = node_context.stop

    def on_term(signum, frame):
        # A signal from elsewhere (a kill of this process, a supervisor that
        # signals every process of the launch) is the program's stop, as
        # for a C++ node process. Told from a thread of its own: the main
        # thread, where this runs, may be amid a line to the host.
        threading.Thread(target=node_context.stop, name=f"lp-{label}-signal", daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    server.start()
    if node_context.connected():
        node_context.tell(f"{protocol.PYTHON_CONTROL_SERVING}{server.url}")  # its host says where it serves
    else:
        print(f"[lp] {label} serving at {server.url}", flush=True)
    saver = None
    if keeping is not None:
        # state() takes the server's call lock (None: concurrent handlers),
        # so a save waits for the call that runs, as lp_save does.
        service = spec.get(protocol.PYTHON_SPEC_SERVICE, type(target).__name__)
        saver = checkpoint.Saver(target, keeping.save, service,
                                 label, turn=server._lock,
                                 to_bytes=keeping.to_bytes).start(keeping.interval_s)
    runner = _start_run(spec, target, ended)
    _watch_health(spec, server)

    while not ended.wait(1.0):
        pass
    notice = float(spec.get(protocol.PYTHON_SPEC_TERMINATION_NOTICE_S, 10))
    # run() returns before the calls drain, as a C++ node's run()s are
    # joined before its servers drain. It has as long as a C++ run() has:
    # the host bounds it (it ends this process after its termination
    # notice); a node without one gives it the notice.
    bounded = not node_context.connected() or node_context.host_lost()
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


def _start_run(spec, target, ended):
    """Starts the thread of run(), if the node has one."""
    if not spec.get(protocol.PYTHON_SPEC_HAS_RUN):
        return None
    label = spec[protocol.PYTHON_SPEC_NODE]

    def run():
        # As a C++ node's, run() starts once every node of the program serves.
        if not node_context.wait_for_run(ended):
            return
        progress.begin()
        try:
            target.run()
        except BaseException:
            _fail(1, label, "run() raised", _last_lines(traceback.format_exc()))
        finally:
            progress.end()
        node_context.tell(protocol.PYTHON_CONTROL_FINISHED)

    runner = threading.Thread(target=run, name=f"lp-{label}-run", daemon=True)
    runner.start()
    return runner


def _watch_health(spec, server):
    """Ends this process when the node hangs past its group's
    health_timeout, as a C++ node process's watchdog does (watchdog.hpp;
    docs/launching.md, "Hung nodes"): when a probe that takes the node's
    turn between calls has waited that long (HUNG; a node with concurrent
    handlers has no turn to take), or when run() has made no sign of
    progress that long (HUNG_RUN; until the program stops). It prints why,
    and exits at once: a hung thread cannot be joined."""
    timeout_ms = spec.get(protocol.PYTHON_SPEC_HEALTH_TIMEOUT_MS) or 0
    if timeout_ms <= 0:
        return
    timeout = timeout_ms / 1000
    label = spec[protocol.PYTHON_SPEC_NODE]
    probing_since = [0.0]  # when the running probe began to wait; 0: none waits
    turn = server._lock

    def probe():
        while True:
            probing_since[0] = time.monotonic()
            with turn:
                pass
            probing_since[0] = 0.0
            time.sleep(timeout / 4)

    def hung(status, why):
        print(f"[lp] node {label} hung: {why}, past its group's health_timeout of "
              f"{timeout_ms} ms; ending its process", file=sys.stderr, flush=True)
        os._exit(status)

    def watch():
        while True:
            time.sleep(timeout / 4)
            now = time.monotonic()
            since = probing_since[0]
            if since and now - since >= timeout:
                busy = server.methods_in_flight()
                hung(HUNG, f"a call waited {(now - since) * 1000:.0f} ms for its handlers "
                     f"({'calls in flight: ' + busy if busy else 'no call in flight'})")
            silence = progress.silence(now)
            if silence >= timeout and not node_context.stop_requested():
                hung(HUNG_RUN, "its run() made no sign of progress (a call, "
                     "launchpad_client.stop_requested(), a metric, "
                     f"launchpad_client.heartbeat()) for {silence * 1000:.0f} ms")

    if turn is not None:
        threading.Thread(target=probe, name=f"lp-{label}-probe", daemon=True).start()
    threading.Thread(target=watch, name=f"lp-{label}-watch", daemon=True).start()


def main(argv):
    words = argv[1:]
    check_only = words[:1] == [protocol.PYTHON_RUNTIME_CHECK]
    if check_only:
        words = words[1:]
    if len(words) != 1:
        print("usage: python3 -m launchpad_client.runtime [--check] (--node=PROGRAM/LABEL | SPEC)"
              " (a launch starts it; by hand, give a spec file)", file=sys.stderr)
        return USAGE
    sock = None
    if words[0].startswith(protocol.PYTHON_RUNTIME_NODE):
        name = words[0][len(protocol.PYTHON_RUNTIME_NODE):]
        sock = _control_socket(name)
        spec, args_cbor, pending = _receive_spec(sock, name)
    else:
        with open(words[0], encoding="utf-8") as f:
            spec = json.load(f)
        args_cbor = None
    label = spec[protocol.PYTHON_SPEC_NODE]
    if check_only:
        # A launch of processes checks every Python class before any node
        # starts: the import and the comparison, nothing built or served.
        cls = _import_class(spec)
        _check_class(spec, cls)
        return 0
    malloc_tuning.keep_large_blocks()
    ended = threading.Event()  # the host's `end`, or its loss; without one, a stop
    if sock is not None:
        _connect_host(label, sock, pending, ended)
    else:
        node_context.serve_alone(lambda lost: ended.set())
    credentials = _Credentials(spec)

    cls = _import_class(spec)
    _check_class(spec, cls)
    keeping = _checkpoint_spec(spec, cls)
    try:
        target = cls(*_arguments(spec, args_cbor, credentials, cls))
    except BaseException:
        _fail(CONSTRUCTION_FAILED, label, f"{spec[protocol.PYTHON_SPEC_CLASS_NAME]}(...) raised",
              _last_lines(traceback.format_exc()))

    if keeping is not None and keeping.restore:
        _restore(target, spec, keeping.restore, keeping)
    main_done = threading.Event()
    _serve(spec, target, credentials, ended, keeping, main_done)
    main_done.set()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
