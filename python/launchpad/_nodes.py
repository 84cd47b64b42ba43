"""The nodes of a Launchpad program, as its add_node takes them, and the
definition each becomes: what its process calls, with which arguments,
cloudpickled by launch() (so a lambda or a functools.partial goes as
Launchpad's own nodes take them) and built only by that node's process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any


class Definition:
    """What a node's process builds: the object it serves and runs
    (launchpad_client's runtime unpickles it and calls build())."""

    def __init__(self, kind: str, target: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.kind, self.target, self.args, self.kwargs = kind, target, args, kwargs

    def build(self) -> Any:
        """The node's object: the class's instance (or the function's
        result), or for a PyNode an object whose run() calls the function."""
        if self.kind == "py":
            return _Run(self.target, self.args, self.kwargs)
        return self.target(*self.args, **self.kwargs)


class _Run:
    """A PyNode's object: run() is its function's call; it serves nothing."""

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self._function, self._args, self._kwargs = function, args, kwargs

    def run(self) -> None:
        self._function(*self._args, **self._kwargs)


class _Node:
    kind = ""

    def __init__(self, target: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        if not callable(target):
            raise TypeError(f"{type(self).__name__} takes a class or a function to call, "
                            f"not a {type(target).__name__}")
        self.definition = Definition(self.kind, target, args, kwargs)
        self._place()

    def _place(self) -> None:
        # Where the node is: added to a program (its launch label there), or
        # the `index`th node of a MultiThreadingColocation; its handle once
        # it is either (add_node's).
        self._handle: Any = None
        self._program: Any = None
        self._launch_label: str | None = None
        self._colocation: MultiThreadingColocation | None = None
        self._index = 0

    def create_handle(self) -> Any:
        """The node's handle, as add_node returned it."""
        if self._handle is None:
            raise RuntimeError(f"this {type(self).__name__} has no handle yet: add it to its "
                               "program first (program.add_node(node, label=...)), then "
                               "call create_handle()")
        return self._handle

    @property
    def service(self) -> str:
        """The name the launch shows for the node: its class's or function's."""
        name = getattr(self.definition.target, "__qualname__", None) or type(
            self.definition.target).__name__
        return "".join(c if c.isalnum() or c in "_-." else "_" for c in name)

    @property
    def has_run(self) -> bool:
        """Whether its process calls run() once every node serves: a PyNode's
        function always; a class's run() if it has one; a function's result
        is known only in its process, which looks for run() there."""
        target = self.definition.target
        if self.kind == "py" or not isinstance(target, type):
            return True
        return callable(getattr(target, "run", None))


class PyClassNode(_Node):
    """A node that builds `cls(*args, **kwargs)` and runs its run()."""

    kind = "class"

    def __init__(self, target: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(target, *args, **kwargs)
        self._should_run = True

    def disable_run(self) -> None:
        """Its run() is not called (the object is built all the same, and a
        CourierNode serves until the program stops), as in Launchpad, where
        tests step such a node by hand."""
        self._should_run = False

    def enable_run(self) -> None:
        """Undoes disable_run(): run() is called, if the object has one."""
        self._should_run = True

    @property
    def has_run(self) -> bool:
        """Whether its process calls run(): not after disable_run()."""
        return self._should_run and super().has_run


class CourierNode(PyClassNode):
    """A node that serves the public methods of `cls(*args, **kwargs)` (or
    of what a function returns) and runs its run(), if it has one."""

    kind = "courier"


class PyNode(_Node):
    """A node that calls `function(*args, **kwargs)` as its run()."""

    kind = "py"


class MultiThreadingColocation(PyNode):
    """Launchpad's colocation: `nodes` run as threads of one process, each
    reachable through its own handle (`node.create_handle()`, or what this
    object's add_node returns). Its run() runs every node's run() on a
    thread of its own and returns once all of them returned, or once the
    first did with `return_on_first_completed`; a node's run() that raises
    raises here, which fails the process and with it every node of the
    colocation (its group's restarts restart them together). The
    colocation's process serves the methods of all its nodes on one
    address: a handle of its node i calls them as "i.method"."""

    kind = "colocation"

    def __init__(self, nodes: Sequence[_Node], return_on_first_completed: bool = False) -> None:
        self._place()
        self._nodes: list[_Node] = []
        self._return_on_first_completed = return_on_first_completed
        for node in nodes:
            self.add_node(node)

    def add_node(self, node: _Node) -> Any:
        """Colocates `node` here; returns its handle."""
        from ._program import CourierHandle  # the handles' module imports this one

        if not isinstance(node, _Node):
            raise TypeError("MultiThreadingColocation takes launchpad nodes (CourierNode, "
                            f"PyClassNode, PyNode, MultiThreadingColocation), not a "
                            f"{type(node).__name__}")
        if node.kind == "cpp":
            raise ValueError("a CppNode's process is its C++ program, not a thread of a "
                             "Python process: add it to the program, not to a "
                             "MultiThreadingColocation")
        if node._colocation is not None or node._program is not None:
            where = ("in another MultiThreadingColocation" if node._colocation is not None
                     else f"{node._launch_label} of program {node._program.name}")
            raise ValueError(f"this {type(node).__name__} is {where} already (make another "
                             "node to run it twice)")
        ancestor: _Node | None = self
        while ancestor is not None:
            if ancestor is node:
                raise ValueError("a MultiThreadingColocation cannot hold itself")
            ancestor = ancestor._colocation
        node._colocation, node._index = self, len(self._nodes)
        self._nodes.append(node)
        node._handle = CourierHandle(node)
        return node._handle

    @property
    def nodes(self) -> list[_Node]:
        """The colocated nodes, in the order they were added."""
        return list(self._nodes)

    @property
    def definition(self) -> Colocated:  # type: ignore[override]
        """What the colocation's process builds: its nodes' definitions."""
        if not self._nodes:
            raise ValueError("a MultiThreadingColocation needs at least one node")
        return Colocated([(n.definition, n.has_run) for n in self._nodes],
                         self._return_on_first_completed)

    @property
    def service(self) -> str:
        """The name the launch shows for the colocation's process."""
        return "MultiThreadingColocation"

    @property
    def has_run(self) -> bool:
        """Whether any of its nodes runs."""
        return any(n.has_run for n in self._nodes)


class Colocated:
    """A MultiThreadingColocation's definition: its nodes' definitions,
    each with whether its run() is called."""

    def __init__(self, parts: list[tuple[Definition | Colocated, bool]],
                 return_on_first_completed: bool) -> None:
        self.parts, self.return_on_first_completed = parts, return_on_first_completed

    def build(self) -> _Colocation:
        return _Colocation([(d.build(), runs) for d, runs in self.parts],
                           self.return_on_first_completed)


def _served_names(target: Any) -> list[str]:
    # As a Launchpad node's server lists its methods (launchpad_client's
    # untyped_methods): public ones, run() aside.
    return [n for n in dir(target)
            if not n.startswith("_") and n != "run" and callable(getattr(target, n, None))]


class _Colocation:
    """The object a colocation's process serves and runs: its nodes' methods
    as "i.method" (dir() lists them, the server finds them by name), and a
    run() that runs theirs."""

    def __init__(self, parts: list[tuple[Any, bool]], return_on_first_completed: bool) -> None:
        self._parts, self._first = parts, return_on_first_completed

    def __dir__(self) -> list[str]:
        return ["run"] + [f"{i}.{name}" for i, (part, _) in enumerate(self._parts)
                          for name in _served_names(part)]

    def __getattr__(self, name: str) -> Any:
        parts = self.__dict__.get("_parts", ())
        index, dot, rest = name.partition(".")
        if not dot or not index.isdigit() or int(index) >= len(parts) or rest.startswith("_"):
            raise AttributeError(name)
        return getattr(parts[int(index)][0], rest)

    def run(self) -> None:
        runners = [(i, part) for i, (part, runs) in enumerate(self._parts)
                   if runs and callable(getattr(part, "run", None))]
        changed = threading.Condition()
        returned: list[int] = []
        raised: list[BaseException] = []

        def run_one(part: Any) -> None:
            try:
                part.run()
            except BaseException as e:
                with changed:
                    raised.append(e)
            finally:
                with changed:
                    returned.append(1)
                    changed.notify_all()

        for i, part in runners:
            threading.Thread(target=run_one, args=(part,), name=f"lp-colocated-{i}",
                             daemon=True).start()
        with changed:
            changed.wait_for(lambda: bool(raised) or len(returned) == len(runners)
                             or (self._first and bool(returned)))
            if raised:
                raise raised[0]


class RunEnds:
    """A node's definition as launch() describes it: the node's, and the
    file its process makes when the node's run() has returned, which
    Controller.wait(labels_to_wait_for=...) looks for in the launch's
    directory (0700, the script's)."""

    def __init__(self, definition: Definition | Colocated, ran: str) -> None:
        self.definition, self.ran = definition, ran

    def build(self) -> Any:
        built = self.definition.build()
        run: Callable[[], Any] | None = getattr(built, "run", None)
        if run is None or not callable(run):
            return built
        ran, ends = self.ran, run

        def run_and_note() -> None:
            ends()
            try:
                with open(ran, "x"):
                    pass
            except OSError:
                pass  # noted by an earlier run of a restarted node, or no such directory

        try:
            setattr(built, "run", run_and_note)
        except (AttributeError, TypeError):
            pass  # __slots__ or a property: waiting for its group waits for the program's end
        return built
