"""launch(): the program described to the C++ launcher, lp-launchpad, which
launches it as it launches a C++ program of Python nodes. This process
writes the description into a directory of its own (mode 0700), starts the
launcher on it, waits for the program to end and removes the directory.

The description is CBOR (src/lp_launchpad.cpp reads it): the program's
name and, per node, its group, the name shown for it, whether it runs, the
labels of the handles it was given, and its definition, cloudpickled. Only
the node's own process unpickles a definition, read from this directory by
its host and handed over its control socket: the trust is that of running
this script (docs/security.md)."""

from __future__ import annotations

import enum
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import cbor2

from . import _program
from ._program import Program

from launchpad_client import _protocol as protocol

LAUNCHER = protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER
LAUNCHER_VARIABLE = protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER_VARIABLE  # its path, before PATH's


class LaunchType(str, enum.Enum):
    """The launches that run so far, as Launchpad names them, and Slurm,
    which Launchpad lacks (docs/coming_from_launchpad.md)."""

    LOCAL_MULTI_THREADING = "local_mt"
    LOCAL_MULTI_PROCESSING = "local_mp"
    SLURM = "slurm"


def _launcher() -> str:
    named = os.environ.get(LAUNCHER_VARIABLE)
    if named:
        return named
    found = shutil.which(LAUNCHER)
    if found:
        return found
    raise FileNotFoundError(f"no {LAUNCHER} launcher: install the library (meson install puts "
                            f"it on PATH) or name its path in {LAUNCHER_VARIABLE}")


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


def _description(program: Program) -> bytes:
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
    for label, node in program._nodes():
        _program._pickled.labels = []
        try:
            definition = cloudpickle.dumps(node.definition)
            edges = _program._pickled.labels
        except Exception as e:
            raise TypeError(f"node {label} of program {program.name} cannot be described to its "
                            f"launch: {type(e).__name__}: {e}") from e
        finally:
            _program._pickled.labels = None
        key = protocol
        nodes.append({key.LAUNCHPAD_DESCRIPTION_GROUP: label.rsplit("/", 1)[0],
                      key.LAUNCHPAD_DESCRIPTION_SERVICE: node.service,
                      key.LAUNCHPAD_DESCRIPTION_HAS_RUN: node.has_run,
                      key.LAUNCHPAD_DESCRIPTION_EDGES: sorted(set(edges)),
                      key.LAUNCHPAD_DESCRIPTION_DEFINITION: definition})
    encoded: bytes = cbor2.dumps({protocol.LAUNCHPAD_DESCRIPTION_NAME: program.name,
                                  protocol.LAUNCHPAD_DESCRIPTION_NODES: nodes})
    return encoded


def launch(program: Program, launch_type: LaunchType | str = LaunchType.LOCAL_MULTI_THREADING,
           *, lp_flags: tuple[str, ...] = ()) -> int:
    """Launches `program` with lp-launchpad and waits until it ends (a node
    called stop(), or this process got SIGINT or SIGTERM, which it passes
    on). Returns the launcher's exit status: 0 for a program that ended
    cleanly. `lp_flags`: more of the library's --lp_* flags
    (docs/launching.md), such as "--lp_status=DIR"."""
    kind = LaunchType(launch_type)
    description = _description(program)
    directory = tempfile.mkdtemp(prefix=f"lp-launchpad-{program.name}-",  # mode 0700
                                 dir=_description_parent(kind, lp_flags))
    try:
        path = os.path.join(directory, "program.cbor")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(description)
        # The nodes import what this script imports (cloudpickle names
        # importable modules' classes by reference) and run on its Python.
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        command = [_launcher(), path, f"--lp_launch={kind.value}", f"--lp_python={sys.executable}",
                   *lp_flags]
        launcher = subprocess.Popen(command, env=env)
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

        def pass_on(signum: int, frame: object) -> None:
            launcher.send_signal(signum)

        for s in previous:
            signal.signal(s, pass_on)
        try:
            return launcher.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            if launcher.poll() is None:  # this process is leaving first
                launcher.terminate()
                launcher.wait()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
