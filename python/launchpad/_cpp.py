"""lp.CppNode: a C++ program built with the library, run as a node of a
Launchpad program (docs/coming_from_launchpad.md, "Calling a C++ node").

The node is a CourierNode like any other of the program, hosted by the
same launcher (its secret, its status page, its restarts): the object it
serves starts the C++ program, under local_mt and on loopback, as a child
of the node's process, and forwards each call to the C++ node through
launchpad_client, which checks the arguments against the C++ declaration
and converts them (a tuple for a std::tuple, a numpy array for a
std::vector<float>, ...). So the node's handle arrives in the program's
other nodes as a CourierClient with the C++ methods. The C++ program lives
and ends with its node: a C++ program that ends while its node serves
ends the node, as a failure; the node's stop stops it.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from ._nodes import CourierNode

# The lines a local_mt launch of the library writes as it starts: its run
# directory (launchpad_client.attach names this line too), and, once every
# node serves and has written its address there, its status page.
_RUN_DIRECTORY = re.compile(r"\[lp\] the launch's secret is in (.+)/secret$")
_STATUS_PAGE = re.compile(r"\[lp\] status at \S+$")
_STOP_WAIT = 30.0  # seconds for the C++ program to end once asked, before SIGKILL


class CppNode(CourierNode):
    """A node that runs `executable` (a C++ program built with the library)
    with `args` under local_mt, and serves the methods of its node `node`
    (by default its only node), as a CourierNode serves a class's::

        calculator = program.add_node(lp.CppNode("./calculator"), label="calculator")
        program.add_node(lp.PyNode(use, calculator), label="user")

    `args` are the C++ program's own command-line arguments (strings); the
    node chooses its launch (--lp_launch=local_mt). Calls take positional
    arguments, checked against the C++ types where the node makes them."""

    def __init__(self, executable: str | os.PathLike[str], *args: str, node: str | None = None,
                 startup_timeout: float = 60.0) -> None:
        path = _executable(executable)
        for i, arg in enumerate(args):
            if not isinstance(arg, str):
                raise TypeError(f"CppNode's argument {i + 1} is a {type(arg).__name__}: the C++ "
                                "program's arguments are its command line, strings")
            if arg.startswith("--lp_launch"):
                raise ValueError(f"CppNode runs {path} under --lp_launch=local_mt, on its "
                                 f"node's host; leave {arg!r} out (the Launchpad program's "
                                 "launch type places the node)")
            if arg == "--lp_status_port=off":
                raise ValueError(f"CppNode needs {path}'s status page: its line says that every "
                                 "node of the C++ program serves; leave --lp_status_port=off out")
        super().__init__(_CppProgram, path, args, node, float(startup_timeout))
        self._name = os.path.basename(path)

    @property
    def service(self) -> str:
        """The name the launch shows for the node: the executable's."""
        return "".join(c if c.isalnum() or c in "_-." else "_" for c in self._name)


def _executable(given: str | os.PathLike[str]) -> str:
    """The absolute path of `given` (a path, or a name on PATH), checked in
    the launching script, where a mistake is cheapest to see."""
    name = os.fspath(given)
    found = shutil.which(name) if os.sep not in name else name
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise FileNotFoundError(f"CppNode: {name!r} is not an executable file (give the path "
                                "of a C++ program built with the library, or a name on PATH)")
    return os.path.abspath(found)


class _CppProgram:
    """What a CppNode's process serves: the C++ program, started here, and
    its node's methods as this object's, each forwarding its call."""

    def __init__(self, executable: str, args: tuple[str, ...], node: str | None,
                 startup_timeout: float) -> None:
        import launchpad_client  # the node's process has it: it runs the node

        self._executable = executable
        self._stopping = False
        self._found = threading.Event()
        self._run_dir: str | None = None
        self._serving = False  # every node of the C++ program serves
        # The launch's own variables are this node's, not the C++ program's.
        env = {k: v for k, v in os.environ.items() if not k.startswith("LP_")}
        self._process = subprocess.Popen(
            [executable, "--lp_launch=local_mt", *args], stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=env)
        assert self._process.stderr is not None
        threading.Thread(target=self._follow_output, args=(self._process.stderr,),
                         name="lp-cpp-output", daemon=True).start()
        try:
            if not self._found.wait(startup_timeout):
                raise RuntimeError(self._not_started(f"did not start within "
                                                     f"{startup_timeout:g} s"))
            if not self._serving:
                raise RuntimeError(self._not_started("ended before it served",
                                                     " (is it a program built with the library?)"))
            # Every node's address is in the run directory by now.
            assert self._run_dir is not None
            program = launchpad_client.attach(self._run_dir, startup_timeout=startup_timeout)
            labels = program.labels
            if node is None and len(labels) != 1:
                raise ValueError(f"{executable} runs the nodes {', '.join(labels)}: name the "
                                 "one to serve, CppNode(executable, node=LABEL)")
            if node is not None and node not in labels:
                raise ValueError(f"{executable} has no node {node!r}; its nodes: "
                                 f"{', '.join(labels)}")
            self._node = program[node if node is not None else labels[0]]
            for name in self._node.method_names():
                if not name.startswith("_"):
                    setattr(self, name, _forward(self._node, name))
        except BaseException:
            self._stop()
            raise
        atexit.register(self._stop)
        threading.Thread(target=self._watch, name="lp-cpp-watch", daemon=True).start()

    def _follow_output(self, stream: IO[bytes]) -> None:
        """The C++ program's stderr, passed on as the node's own; its lines
        say where the program is and when every node of it serves."""
        for raw in stream:
            line = raw.decode(errors="replace").rstrip("\n")
            print(line, file=sys.stderr, flush=True)
            found = _RUN_DIRECTORY.search(line)
            if found and self._run_dir is None:
                self._run_dir = found.group(1)
            if self._run_dir is not None and _STATUS_PAGE.search(line):
                self._serving = True
                self._found.set()
        self._found.set()  # it ended before it served: __init__ says so

    def _not_started(self, how: str, hint: str = "") -> str:
        try:
            status: int | None = self._process.wait(1.0)
        except subprocess.TimeoutExpired:
            status = None
        ended = "" if status is None else f" with status {status}"
        return f"the C++ program {self._executable} {how}{ended}{hint}; its output is above"

    def _watch(self) -> None:
        """The C++ program must outlive its node's serving: if it ends first,
        the node fails with it (and restarts, where its group says so)."""
        status = self._process.wait()
        if not self._stopping:
            print(f"[lp] the C++ program {self._executable} ended with status {status} while "
                  "its node served; the node ends with it", file=sys.stderr, flush=True)
            os._exit(1)

    def _stop(self) -> None:
        """Stops the C++ program as a user would (SIGTERM: its launch's
        stop), killing it if it has not ended after _STOP_WAIT seconds."""
        self._stopping = True
        if self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(_STOP_WAIT)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _forward(node: Any, name: str) -> Callable[..., Any]:
    method = getattr(node, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{name}() of a C++ node takes positional arguments only, not "
                            f"{', '.join(kwargs)}; its signature: {method._spec.signature}")
        return method(*args)

    call.__name__ = call.__qualname__ = name
    return call
