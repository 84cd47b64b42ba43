"""A Python object's methods as a node serves them: what describe says of
each (from the C++ declaration where there is one, else from its type
hints) and the checks and conversions of a call's arguments and result."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from .. import _protocol as protocol
from .._wire import hints
from .._wire.schema import CppType, from_schema
from .figures import MethodFigures


class Served:
    """A served method: its callable, the checks of its arguments and result
    (from the C++ declaration when there is one, else from its hints), and
    the hints that turn decoded values into the Python types it takes."""

    def __init__(self, target: Any, entry: dict[str, Any], declared: dict[str, Any] | None) -> None:
        self.name: str = entry["name"]
        self.function = getattr(target, self.name)
        self.arity = entry["arity"]
        self.figures = MethodFigures()
        # A Launchpad program's node: any arguments, values as they come.
        self.untyped = entry["params"] is None
        if self.untyped:
            self.params: list[CppType] = []
            self.param_hints: list[Any] = []
            self.result: CppType | None = None
            self.returns_nothing = False
            return
        schemas = declared or entry
        self.params = [from_schema(s) for s in schemas["params"]]
        self.result = from_schema(schemas["result"])
        self.returns_nothing = schemas["result"].get("kind") == protocol.KIND_NOTHING
        self.param_hints, self.result_hint, _ = hints.method_hints(type(target), self.name)


def _with_widths(schema: Any, declared: Any = None) -> Any:
    """A schema from hints with the "any width" of a plain int or float made
    the C++ declaration's (`declared`, the same place in its schema), or
    else the widest (int64, float64)."""
    if not isinstance(schema, dict):
        return schema
    declared = declared if isinstance(declared, dict) else {}
    out: dict[str, Any] = {}
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


def as_hint(value: Any, hint: Any) -> Any:
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


def wire_of(value: Any) -> Any:
    """A result as what the checks take: dataclasses as dicts, sets as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: wire_of(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return [wire_of(v) for v in sorted(value)]
    if isinstance(value, tuple):
        return [wire_of(v) for v in value]
    if isinstance(value, list):
        return [wire_of(v) for v in value]
    if isinstance(value, dict):
        return {k: wire_of(v) for k, v in value.items()}
    return value


def untyped_methods(target: Any) -> list[dict[str, Any]]:
    """describe's "methods" for a Launchpad program's node: every public
    method of the object (run() aside), untyped, as Courier serves them."""
    names = sorted(n for n in dir(target)
                   if not n.startswith("_") and n != "run" and callable(getattr(target, n, None)))
    return [{"name": n, "arity": None, "params": None, "result": {"kind": protocol.KIND_JSON},
             "signature": f"{n}(...)"} for n in names]


def described_methods(cls: type, declared: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
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
