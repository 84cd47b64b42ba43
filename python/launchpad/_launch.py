"""launch(): the program described to the C++ launcher, lp-launchpad, which
launches it as it launches a C++ program of Python nodes. This process
writes the description into a directory of its own (mode 0700), starts the
launcher on it and returns a Controller, as Launchpad's launch returns its
worker manager: wait() for the program's end (or, with
labels_to_wait_for, for the runs of some groups: each node's process notes
its run()'s return in runs/<group>/<index> of this directory), stop() to
end it.

The description is CBOR (src/lp_launchpad.cpp reads it): the program's
name and, per node, its group, the name shown for it, whether it runs, the
labels of the handles it was given, and its definition, cloudpickled; per
group with settings, its restarts, resources and environment (_groups.py). Only
the node's own process unpickles a definition, read from this directory by
its host and handed over its control socket: the trust is that of running
this script (docs/security.md).

This process and the launcher share a socket pair (protocol.toml's
launchpad_description.control_*): a `stop` line stops the program, and so
does the socket's end, when this process is gone however it died; the
launcher then removes the description's directory. Under test_mt and
test_mp the launcher answers `ready <json>` once every node serves: the
nodes' URLs and the launch's secret, for dereference()."""

from __future__ import annotations

import atexit
import enum
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cbor2

from launchpad_client import Node
from launchpad_client import _protocol as protocol

from . import _flags, _program
from ._cpp import CppNode
from ._groups import PythonProcess, check_env
from ._nodes import RunEnds
from ._program import Program

LAUNCHER = protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER
_launcher = _flags.launcher


class LaunchType(str, enum.Enum):
    """The launches that run, as Launchpad names them, and Slurm and
    Kubernetes, which Launchpad lacks (docs/coming_from_launchpad.md)."""

    LOCAL_MULTI_THREADING = "local_mt"
    LOCAL_MULTI_PROCESSING = "local_mp"
    TEST_MULTI_THREADING = "test_mt"
    TEST_MULTI_PROCESSING = "test_mp"
    SLURM = "slurm"
    KUBERNETES = "kubernetes"


_TESTS = (LaunchType.TEST_MULTI_THREADING, LaunchType.TEST_MULTI_PROCESSING)


def _description_parent(kind: LaunchType, lp_flags: tuple[str, ...]) -> str | None:
    """Where the description's directory goes: $TMPDIR for a launch on this
    host; for Slurm, where the launch's run directories go (--lp_slurm_dir,
    by default ./lp-slurm), which every host of the job sees at the same
    path: the job's supervisor and steps read the description there."""
    if kind is not LaunchType.SLURM:
        return None
    if "--lp_slurm_detach" in lp_flags:
        raise ValueError("launchpad.launch() removes the program's description when the launch "
                         "ends, which --lp_slurm_detach does at once: a Launchpad program's job "
                         "is followed until it ends")
    parent = "lp-slurm"
    for flag in lp_flags:
        if flag.startswith("--lp_slurm_dir="):
            parent = flag.split("=", 1)[1]
    parent = os.path.abspath(parent)
    os.makedirs(parent, exist_ok=True)
    return parent


def _local_env(program: Program, local_resources: Any) -> dict[str, dict[str, str]]:
    """local_resources' env per group, checked: Launchpad's
    {label: PythonProcess(env=...)}."""
    if local_resources is None:
        return {}
    if not isinstance(local_resources, Mapping):
        raise TypeError("local_resources is a dict of group labels to lp.PythonProcess, not a "
                        f"{type(local_resources).__name__}")
    env = {}
    for label, config in local_resources.items():
        if label not in program.groups:
            raise ValueError(f"local_resources names group {label!r}, which program "
                             f"{program.name} lacks (its groups: {', '.join(program.groups)})")
        if not isinstance(config, PythonProcess):
            raise TypeError(f"local_resources[{label!r}] is an lp.PythonProcess(env=...), not a "
                            f"{type(config).__name__}")
        if config.args:
            raise ValueError(f"local_resources[{label!r}].args ({', '.join(config.args)}) has "
                             "no counterpart here: a node's process runs the library's runtime, "
                             "not this script, and reads no flags of it. Give the values to the "
                             "node's constructor, or as environment variables: "
                             f"PythonProcess(env=...) or program.group({label!r}).env(...)")
        env[label] = check_env(label, config.env)
    return env


def _check_xm_resources(xm_resources: Any, kind: LaunchType) -> None:
    # Launchpad reads xm_resources only when it launches on Vertex AI, and
    # ignores it otherwise: so does this, but on a cluster, where it would
    # be expected to allocate, it is refused for what allocates here.
    if xm_resources and kind in (LaunchType.SLURM, LaunchType.KUBERNETES):
        raise ValueError(f"xm_resources is for Vertex AI, which {kind.value} does not read: ask "
                         "for a group's resources with program.group(label).resources("
                         "lp.Resources(cpus=..., memory_mb=..., gpus=...)), which Slurm and "
                         "Kubernetes allocate (docs/coming_from_launchpad.md)")


def _warn_restarts_under_threads(program: Program, kind: LaunchType) -> None:
    if kind not in (LaunchType.LOCAL_MULTI_THREADING, LaunchType.TEST_MULTI_THREADING):
        return
    for label, settings in sorted(program._settings.items()):
        if settings.max_restarts:
            print(f"[lp] group {label}'s restart_on_failure({settings.max_restarts}) applies "
                  f"under local_mp, test_mp, slurm and kubernetes; under {kind.value} a node's "
                  "failure stops the program", file=sys.stderr, flush=True)


def _description(program: Program, local_env: Mapping[str, Mapping[str, str]],
                 runs: str | None) -> bytes:
    # Imported here, not with the module: `import launchpad` (its names, its
    # reference, a program being built) works without cloudpickle, and only
    # launching says what is missing.
    try:
        import cloudpickle
    except ImportError as e:
        raise ImportError("launchpad.launch() writes each node's definition with cloudpickle, "
                          f"which {sys.executable} cannot import: apt-get install "
                          "python3-cloudpickle (Debian) or pip install cloudpickle") from e
    nodes = []
    key = protocol
    for label, node in program._nodes():
        if isinstance(node, CppNode):
            # Its process is the C++ program, which takes no handles here.
            nodes.append({key.LAUNCHPAD_DESCRIPTION_GROUP: label.rsplit("/", 1)[0],
                          key.LAUNCHPAD_DESCRIPTION_SERVICE: node.service,
                          key.LAUNCHPAD_DESCRIPTION_HAS_RUN: node.has_run,
                          key.LAUNCHPAD_DESCRIPTION_EDGES: [],
                          key.LAUNCHPAD_DESCRIPTION_EXECUTABLE: node.executable,
                          key.LAUNCHPAD_DESCRIPTION_EXECUTABLE_NODE: node.node,
                          key.LAUNCHPAD_DESCRIPTION_EXECUTABLE_ARGUMENTS: list(node.args)})
            continue
        _program._pickled.labels = []
        noting: Any = node.definition
        if runs is not None:  # where the node notes that its run() returned
            group, index = label.rsplit("/", 1)
            os.makedirs(os.path.join(runs, group), mode=0o700, exist_ok=True)
            noting = RunEnds(node.definition, os.path.join(runs, group, index))
        try:
            definition = cloudpickle.dumps(noting)
            edges = _program._pickled.labels
        except Exception as e:
            raise TypeError(f"node {label} of program {program.name} cannot be described to its "
                            f"launch: {type(e).__name__}: {e}") from e
        finally:
            _program._pickled.labels = None
        nodes.append({key.LAUNCHPAD_DESCRIPTION_GROUP: label.rsplit("/", 1)[0],
                      key.LAUNCHPAD_DESCRIPTION_SERVICE: node.service,
                      key.LAUNCHPAD_DESCRIPTION_HAS_RUN: node.has_run,
                      # A colocated node's handle of a node beside it is no edge.
                      key.LAUNCHPAD_DESCRIPTION_EDGES: sorted(set(edges) - {label}),
                      key.LAUNCHPAD_DESCRIPTION_DEFINITION: definition})
    described: dict[str, Any] = {protocol.LAUNCHPAD_DESCRIPTION_NAME: program.name,
                                 protocol.LAUNCHPAD_DESCRIPTION_NODES: nodes}
    groups = program._described_groups(local_env)
    if groups:
        described[protocol.LAUNCHPAD_DESCRIPTION_GROUPS] = groups
    encoded: bytes = cbor2.dumps(described)
    return encoded


class Controller:
    """A launched program, as Launchpad's launch returns it: wait() until it
    ends, stop() it, stop_and_wait(). Under test_mt and test_mp, launch()
    returns it once every node serves, and the program's handles
    dereference() to clients of its nodes."""

    def __init__(self, program: Program, kind: LaunchType, process: subprocess.Popen[bytes],
                 link: socket.socket, directory: str) -> None:
        self._program, self._kind = program, kind
        self._process, self._link, self._directory = process, link, directory
        self._ended = threading.Event()
        self._status: int | None = None
        self._waited = False  # wait() saw the end: the script knows how it ended
        self._urls: dict[str, str] = {}
        self._secret = ""
        self._clients: dict[str, Node] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._reap, name=f"lp-launchpad-{program.name}",
                         daemon=True).start()

    def _reap(self) -> None:
        self._status = self._process.wait()
        shutil.rmtree(self._directory, ignore_errors=True)  # a launcher that was killed
        self._link.close()
        with self._lock:
            for node in self._clients.values():
                node.close()
        _running.discard(self)
        call_stop_handlers()  # the program stopped by itself (a node's lp.stop())
        self._ended.set()

    def _wait_ready(self) -> None:
        # The launcher's one line under a test launch; the socket's end if
        # the program could not start (its output said why).
        data = b""
        while b"\n" not in data:
            chunk = self._link.recv(65536)
            if not chunk:
                self.wait(raise_error=False)
                raise RuntimeError(f"program {self._program.name} did not start under "
                                   f"{self._kind.value}: {LAUNCHER} exited with status "
                                   f"{self._status} (its output above says why)")
            data += chunk
        line = data.split(b"\n", 1)[0].decode()
        ready = json.loads(line[len(protocol.LAUNCHPAD_DESCRIPTION_CONTROL_READY):])
        self._urls = dict(ready[protocol.LAUNCHPAD_DESCRIPTION_READY_URLS])
        self._secret = ready[protocol.LAUNCHPAD_DESCRIPTION_READY_SECRET]

    @property
    def exit_status(self) -> int | None:
        """The launcher's exit status once the program ended (0: cleanly),
        else None."""
        return self._status if self._ended.is_set() else None

    def stop(self) -> None:
        """Asks the program to stop, as lp.stop() in a node does; returns at
        once (wait() waits for the end), once this script's stop handlers
        ran."""
        call_stop_handlers()
        try:
            self._link.sendall((protocol.LAUNCHPAD_DESCRIPTION_CONTROL_STOP + "\n").encode())
        except OSError:
            pass  # the launcher is gone already

    def wait(self, labels_to_wait_for: Sequence[str] | None = None, raise_error: bool = True,
             return_on_first_completed: bool = False) -> None:
        """Waits until the program ends, as Launchpad's does. Raises
        RuntimeError if it did not end cleanly (a node failed), unless
        raise_error is False.

        `labels_to_wait_for`: groups' labels; returns once the run() of
        every node of those groups has returned (with
        `return_on_first_completed`, of any one of them), the program still
        running, or once the program ended, whichever comes first. A node
        with no run() ends with the program."""
        if labels_to_wait_for is not None and self._runs_ended(labels_to_wait_for,
                                                               return_on_first_completed):
            return
        self._await_end()
        self._waited = True
        if raise_error and self._status != 0 and self._kind is LaunchType.KUBERNETES:
            raise RuntimeError(f"the manifests of program {self._program.name} were not "
                               f"written: {LAUNCHER} exited with status {self._status} (its "
                               "message above says why)")
        if raise_error and self._status != 0:
            raise RuntimeError(f"program {self._program.name} ended with status {self._status} "
                               "(a node failed, or the launch was killed; the launcher's "
                               "summary above says which)")

    def _runs_ended(self, labels: Sequence[str], any_one: bool) -> bool:
        # True once the runs waited for have returned (the nodes' notes in
        # the launch's directory), False once the program ended first.
        if isinstance(labels, str):
            labels = [labels]
        unknown = [label for label in labels if label not in self._program.groups]
        if unknown:
            raise ValueError(f"wait(labels_to_wait_for=...): program {self._program.name} has "
                             f"no group {', '.join(map(repr, unknown))} (its groups: "
                             f"{', '.join(self._program.groups)})")
        if self._kind is LaunchType.KUBERNETES:
            raise ValueError("wait(labels_to_wait_for=...) waits for nodes that run from this "
                             "script; under kubernetes wait() returns once the manifests are "
                             "written (follow the pods with kubectl or lp-kube status)")
        cpp = [label for label in labels
               if any(isinstance(node, CppNode) for node in self._program.groups[label])]
        if cpp:
            raise ValueError(f"wait(labels_to_wait_for=...): group {', '.join(map(repr, cpp))} "
                             "holds a CppNode, whose run() (a C++ process's) this script "
                             "does not hear of; wait for the program's end instead")
        notes = [os.path.join(self._directory, "runs", label, str(index))
                 for label in labels for index in range(len(self._program.groups[label]))]
        done = any if any_one else all
        while not self._ended.wait(0.1):  # in steps: the main thread takes signals between them
            if notes and done(os.path.exists(note) for note in notes):
                return True
        return False

    def _await_end(self) -> None:
        while not self._ended.wait(0.2):  # in steps: the main thread takes signals between them
            pass

    def _wait_at_exit(self) -> None:
        # As Launchpad's: the script ends once its program has. A program
        # that failed while the script never wait()ed for it would leave the
        # script's exit status 0 (Python ignores what an atexit handler
        # raises): the script exits with the launcher's status instead.
        if self._waited:
            return
        self._await_end()
        status = self._status or 0
        if status == 0:
            return
        code = 128 - status if status < 0 else status  # killed by a signal: 128 + its number
        print(f"[lp] program {self._program.name} ended with status {status} and this script "
              f"did not wait() for it: the script exits with status {code}", file=sys.stderr,
              flush=True)
        if "logging" in sys.modules:  # what os._exit would skip of the handlers left
            sys.modules["logging"].shutdown()
        sys.stdout.flush()
        os._exit(code)

    def stop_and_wait(self) -> None:
        """stop(), then wait() without raising."""
        self.stop()
        self.wait(raise_error=False)

    def _node(self, label: str) -> Node:
        if self._kind not in _TESTS:
            raise RuntimeError(f"a handle of node {label!r} is dereferenced outside a node under "
                               f"{self._kind.value}; that is for test_mt and test_mp (a test "
                               "calls the nodes): elsewhere, give the handle to a node")
        if self._ended.is_set():
            raise RuntimeError(f"a handle of node {label!r} is dereferenced after program "
                               f"{self._program.name} ended")
        with self._lock:
            if label not in self._clients:
                self._clients[label] = Node(self._urls[label], self._secret, label=label)
            return self._clients[label]

    def _cleanup_after_test(self) -> None:
        self.stop()
        self.wait()


_running: set[Controller] = set()  # launched by this process, not ended yet

# The launching script's stop handlers (register_stop_handler outside a
# node), each called once, as Launchpad calls those a script registers.
_stop_handlers: list[Callable[[], None]] = []
_stop_handlers_lock = threading.Lock()


def on_stop(handler: Callable[[], None]) -> None:
    """Calls `handler()` once when a program this script launched stops:
    when the script stops it (controller.stop(), lp.stop(), SIGINT or
    SIGTERM), on the thread that does, or else when it has ended."""
    with _stop_handlers_lock:
        _stop_handlers.append(handler)


def remove_on_stop(handler: Callable[[], None]) -> None:
    """Takes back a handler of on_stop() not called yet; nothing if none."""
    with _stop_handlers_lock:
        if handler in _stop_handlers:
            _stop_handlers.remove(handler)


def call_stop_handlers() -> None:
    with _stop_handlers_lock:
        handlers = list(_stop_handlers)
        _stop_handlers.clear()
    for handler in handlers:
        try:
            handler()
        except Exception:  # one handler's failure stops neither the others nor the stop
            print(f"[lp] the stop handler {handler!r} raised:\n{traceback.format_exc()}",
                  file=sys.stderr, flush=True)


def stop_launched() -> bool:
    """Stops every program this process launched; False if there is none."""
    running = list(_running)
    for controller in running:
        controller.stop()
    return bool(running)


def _on_signal(signum: int, frame: types.FrameType | None) -> None:
    # SIGINT and SIGTERM stop the programs this script launched, once each
    # (a stop line, not the signal again: the launcher in this terminal's
    # process group took a Ctrl-C of its own). With none left, the script's
    # previous handler takes it.
    if stop_launched():
        return
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif signum == signal.SIGINT:
        raise KeyboardInterrupt
    else:
        sys.exit(128 + signum)


_previous_handlers: dict[int, Any] = {}


def _handle_signals() -> None:
    if _previous_handlers or threading.current_thread() is not threading.main_thread():
        return
    for s in (signal.SIGINT, signal.SIGTERM):
        _previous_handlers[s] = signal.signal(s, _on_signal)


def launch(programs: Program | Sequence[Program], launch_type: LaunchType | str | None = None,
           xm_resources: Any = None, local_resources: Any = None, test_case: Any = None,
           terminal: str | None = None, *, serialize_py_nodes: bool | None = None,
           lp_flags: tuple[str, ...] = ()) -> Controller:
    """Launches `program` with lp-launchpad and returns its Controller.

    `launch_type`: 'local_mt', 'local_mp', 'test_mt', 'test_mp', 'slurm' or
    'kubernetes' (or a LaunchType); None reads --lp_launch_type. Under
    local_mt and local_mp it returns at once, and this process waits for the
    program's end before it exits; SIGINT and SIGTERM stop the program.
    Under test_mt and test_mp it returns once every node serves, and
    `test_case`'s cleanup stops the program and waits for its end. Under
    kubernetes the launcher writes the launch's manifests (with the
    program's description in its Secret) for kubectl to apply, and wait()
    returns once they are written. `terminal`: as --lp_terminal. `lp_flags`:
    more of the library's --lp_* flags (docs/launching.md); those on this
    script's command line go too.

    `local_resources`: as Launchpad's, {group label: lp.PythonProcess(env=
    {...})}, each group's environment (under every launch). `xm_resources`
    is Vertex AI's: ignored on this host, as Launchpad ignores it there,
    and refused under slurm and kubernetes, where a group's resources are
    program.group(label).resources(lp.Resources(...))."""
    del serialize_py_nodes  # every node is described anyway
    program = programs if isinstance(programs, Program) else programs[0]
    if not isinstance(program, Program):
        raise TypeError(f"launch takes a launchpad.Program, not a {type(program).__name__}")
    kind = LaunchType(launch_type or _flags.launch_type())
    if kind is LaunchType.TEST_MULTI_PROCESSING and test_case is None:
        raise ValueError("launch_type='test_mp' needs test_case= (its cleanup stops the program)")
    _check_xm_resources(xm_resources, kind)
    flags = [*_flags.passed_on(terminal), *lp_flags]
    if kind in (LaunchType.SLURM, LaunchType.KUBERNETES):
        cpp = [label for label, node in program._nodes() if isinstance(node, CppNode)]
        if cpp:
            raise ValueError(f"{', '.join(cpp)} of program {program.name} are CppNodes, which "
                             f"run under local_mt, local_mp, test_mt and test_mp, not "
                             f"{kind.value} yet: their processes serve on loopback only")
    local_env = _local_env(program, local_resources)
    _warn_restarts_under_threads(program, kind)
    directory = tempfile.mkdtemp(prefix=f"{LAUNCHER}-{program.name}-",  # mode 0700
                                 dir=_description_parent(kind, tuple(flags)))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # A pod has no file of this host: under kubernetes there is no wait
        # for labels (wait() returns once the manifests are written).
        runs = None if kind is LaunchType.KUBERNETES else os.path.join(directory, "runs")
        description = _description(program, local_env, runs)
        path = os.path.join(directory, "program.cbor")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(description)
        # The nodes import what this script imports (cloudpickle names
        # importable modules' classes by reference) and run on its Python.
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env[protocol.LAUNCHPAD_DESCRIPTION_CONTROL_VARIABLE] = str(theirs.fileno())
        command = [_launcher(), path, f"--lp_launch={kind.value}"]
        if kind is not LaunchType.KUBERNETES:
            # A pod runs the image's interpreter (python3 on its PATH),
            # not this one, unless lp_flags name it (--lp_python=...).
            command.append(f"--lp_python={sys.executable}")
        command += flags
        # A process group of its own: a Ctrl+C, or a signal to this
        # script's group, reaches the program once, as this script's stop.
        process = subprocess.Popen(command, env=env, pass_fds=(theirs.fileno(),),
                                   process_group=0)
    except BaseException:
        ours.close()
        shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        theirs.close()
    controller = Controller(program, kind, process, ours, directory)
    _running.add(controller)
    program._launched = controller
    if kind in _TESTS:
        if test_case is not None:
            test_case.addCleanup(controller._cleanup_after_test)
        else:
            atexit.register(controller.stop_and_wait)
        controller._wait_ready()
    else:
        _handle_signals()
        atexit.register(controller._wait_at_exit)
    return controller
