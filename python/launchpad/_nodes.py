"""The nodes of a Launchpad program, as its add_node takes them, and the
definition each becomes: what its process calls, with which arguments,
cloudpickled by launch() (so a lambda or a functools.partial goes as
Launchpad's own nodes take them) and built only by that node's process."""

from __future__ import annotations

from collections.abc import Callable
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
        self._handle: Any = None  # add_node's


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
