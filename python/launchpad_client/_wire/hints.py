"""Wire schemas from Python type hints, and their comparison with C++'s.

A Python node describes its methods as a C++ node does (docs/protocol.md,
"Introspection"), from the type hints of its class's methods:

    bool -> boolean            str -> string             None -> void
    int -> any integer         float -> any floating     lp.Json -> json
    int8 ... uint64, float32, float64: that exact width (lp.int32, ...)
    list[N] of a number type N -> typed_array    list[T] -> sequence
    set[T] -> sequence, unique                   tuple[A, B] -> tuple
    dict[str, V] -> map        T | None -> optional     Tensor[N] -> tensor
    a dataclass -> struct, its fields in order

Python has no fixed-width scalars: a plain `int` or `float` stands for any
width, and the C++ declaration decides it (values are range-checked on the
way out). Everything else must match the C++ type's schema exactly.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from typing import Annotated, Any, TypeAlias

from .. import _protocol as protocol


class Width:
    """The exact wire width of a number hint: `Annotated[int, Width(32)]`."""

    def __init__(self, bits: int, signed: bool = True) -> None:
        self.bits, self.signed = bits, signed

    def __repr__(self) -> str:
        return f"Width({self.bits}, signed={self.signed})"


# Each an int or a float to a type checker, and a width to the wire.
int8: TypeAlias = Annotated[int, Width(8)]
"""`int` hint of a C++ `std::int8_t`."""
int16: TypeAlias = Annotated[int, Width(16)]
"""`int` hint of a C++ `std::int16_t`."""
int32: TypeAlias = Annotated[int, Width(32)]
"""`int` hint of a C++ `std::int32_t`."""
int64: TypeAlias = Annotated[int, Width(64)]
"""`int` hint of a C++ `std::int64_t`."""
uint8: TypeAlias = Annotated[int, Width(8, False)]
"""`int` hint of a C++ `std::uint8_t`."""
uint16: TypeAlias = Annotated[int, Width(16, False)]
"""`int` hint of a C++ `std::uint16_t`."""
uint32: TypeAlias = Annotated[int, Width(32, False)]
"""`int` hint of a C++ `std::uint32_t`."""
uint64: TypeAlias = Annotated[int, Width(64, False)]
"""`int` hint of a C++ `std::uint64_t`."""
float32: TypeAlias = Annotated[float, Width(32)]
"""`float` hint of a C++ `float`."""
float64: TypeAlias = Annotated[float, Width(64)]
"""`float` hint of a C++ `double`."""


class Json:
    """Any JSON value: the hint for a C++ `lp::json`."""


class Tensor:
    """`Tensor[float32]`: the hint for a C++ `lp::tensor<float>`, a numpy
    array of any shape."""

    def __class_getitem__(cls, element: Any) -> Any:
        return typing.Annotated[Tensor, _TensorOf(element)]


class _TensorOf:
    def __init__(self, element: Any) -> None:
        self.element = element


class HintError(TypeError):
    """A hint with no wire form, or a method without hints."""


# The "any width" of a plain int or float, which a C++ width of its kind
# matches: no bits in the schema.
_ANY = None


def schema_of(hint: Any, where: str = "a hint") -> dict[str, Any]:
    """The wire schema a type hint stands for; `where` names it in errors."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is None or hint is type(None):
        return {"kind": protocol.KIND_NOTHING}
    if hint is bool:
        return {"kind": protocol.KIND_BOOLEAN}
    if hint is int:
        return {"kind": protocol.KIND_INTEGER, "bits": _ANY}
    if hint is float:
        return {"kind": protocol.KIND_FLOATING, "bits": _ANY}
    if hint is str:
        return {"kind": protocol.KIND_STRING}
    if hint is Json:
        return {"kind": protocol.KIND_JSON}
    if origin is typing.Annotated:
        base, *extras = args
        for extra in extras:
            if isinstance(extra, Width):
                if base is int:
                    return {"kind": protocol.KIND_INTEGER, "bits": extra.bits, "signed": extra.signed}
                return {"kind": protocol.KIND_FLOATING, "bits": extra.bits}
            if isinstance(extra, _TensorOf):
                return {"kind": protocol.KIND_TENSOR, "element": _number(extra.element, where)}
        return schema_of(base, where)
    if origin in (typing.Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        if len(others) == 1 and len(args) == 2:
            return {"kind": protocol.KIND_OPTIONAL, "value": schema_of(others[0], where)}
        raise HintError(f"{where}: {_spell(hint)} is a union; only `T | None` has a wire form")
    if origin in (list, set, frozenset):
        if len(args) != 1:
            raise HintError(f"{where}: {_spell(hint)} needs its element type, as list[float32]")
        element = schema_of(args[0], where)
        if origin is list and element["kind"] in (protocol.KIND_INTEGER, protocol.KIND_FLOATING):
            return {"kind": protocol.KIND_TYPED_ARRAY, "element": element}
        schema: dict[str, Any] = {"kind": protocol.KIND_SEQUENCE, "element": element}
        if origin is not list:
            schema["unique"] = True
        return schema
    if origin is tuple:
        if not args or args[-1] is Ellipsis:
            raise HintError(f"{where}: {_spell(hint)} needs the type of each item, as tuple[int, str]")
        return {"kind": protocol.KIND_TUPLE, "items": [schema_of(a, where) for a in args]}
    if origin is dict:
        if len(args) != 2 or args[0] is not str:
            raise HintError(f"{where}: {_spell(hint)}: a map's keys are strings, as dict[str, V]")
        return {"kind": protocol.KIND_MAP, "key": {"kind": protocol.KIND_STRING},
                "value": schema_of(args[1], where)}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        fields = typing.get_type_hints(hint, include_extras=True)
        return {"kind": protocol.KIND_RECORD, "fields": [
            {"name": f.name, "schema": schema_of(fields[f.name], f"{where}, field {f.name}")}
            for f in dataclasses.fields(hint)]}
    raise HintError(f"{where}: {_spell(hint)} has no wire form (docs/python.md, "
                    "\"Serving a Python object as a node\", lists the hints that have one)")


def _number(hint: Any, where: str) -> dict[str, Any]:
    schema = schema_of(hint, where)
    if schema["kind"] not in (protocol.KIND_INTEGER, protocol.KIND_FLOATING):
        raise HintError(f"{where}: a tensor's element is a number type, not {_spell(hint)}")
    return schema


def _spell(hint: Any) -> str:
    """A hint as a user writes it: float32, list[float], Point."""
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64"):
        if hint == globals()[name]:
            return name
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        for extra in args[1:]:
            if isinstance(extra, _TensorOf):
                return f"Tensor[{_spell(extra.element)}]"
        return _spell(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_spell(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_spell(a) for a in args)}]"
    if hint is None or hint is type(None):
        return "None"
    return getattr(hint, "__name__", repr(hint))


def method_hints(cls: type, name: str) -> tuple[list[Any], Any, list[str]]:
    """(parameter hints, result hint, parameter names) of a method of `cls`,
    from its annotations: every parameter and the result need one."""
    method = getattr(cls, name)
    signature = inspect.signature(method)
    hints = typing.get_type_hints(method, include_extras=True)
    params = [p for p in signature.parameters.values() if p.name != "self"]
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise HintError(f"{cls.__name__}.{name}: parameter {p.name} is {p.kind.description}; "
                            "a remote method takes its arguments by position")
        if p.name not in hints:
            raise HintError(f"{cls.__name__}.{name}: parameter {p.name} has no type hint")
    if "return" not in hints:
        raise HintError(f"{cls.__name__}.{name}: no return type hint (write -> None if it returns nothing)")
    return [hints[p.name] for p in params], hints["return"], [p.name for p in params]


def describe_method(cls: type, name: str) -> dict[str, Any]:
    """What describe lists for a method of a Python class: name, arity,
    params, result and signature, from its hints."""
    params, result, names = method_hints(cls, name)
    where = f"{cls.__name__}.{name}"
    return {
        "name": name,
        "arity": len(params),
        "params": [schema_of(h, f"{where}, parameter {n}") for h, n in zip(params, names)],
        "result": schema_of(result, f"{where}, result"),
        "signature": f"{_spell(result)} {name}({', '.join(_spell(h) for h in params)})",
        "hints": {"params": [_spell(h) for h in params], "result": _spell(result)},
    }


def _mismatch(expected: Any, described: dict[str, Any]) -> str | None:
    """Why a schema from Python hints does not fit the C++ one, or None."""
    if not isinstance(expected, dict):
        return "the C++ schema is not a schema"
    kind = expected.get("kind")
    if kind == protocol.KIND_ENUMERATION:
        kind = protocol.KIND_INTEGER  # an enum travels as its underlying integer
    if described["kind"] != kind:
        return "kinds differ"
    if kind in (protocol.KIND_INTEGER, protocol.KIND_FLOATING) and described.get("bits") is not _ANY:
        if described["bits"] != expected.get("bits"):
            return "widths differ"
        if kind == protocol.KIND_INTEGER and described.get("signed") != expected.get("signed"):
            return "signedness differs"
    if kind in (protocol.KIND_TYPED_ARRAY, protocol.KIND_SEQUENCE):
        if "size" in expected:
            return f"C++ has exactly {expected['size']} items (a std::array), a Python list any number"
        if bool(expected.get("unique")) != bool(described.get("unique")):
            return "a set against a list"
    for key in ("element", "value", "key"):
        if key in expected or key in described:
            why = _mismatch(expected.get(key), described.get(key, {"kind": None}))
            if why:
                return why
    if kind == protocol.KIND_TUPLE:
        items = expected.get("items", [])
        if len(items) != len(described["items"]):
            return "tuples of different lengths"
        for e, d in zip(items, described["items"]):
            why = _mismatch(e, d)
            if why:
                return why
    if kind == protocol.KIND_RECORD:
        if "recursive" in expected:
            return "a struct inside itself has no Python hint yet"
        ours = [f["name"] for f in described["fields"]]
        theirs = [f.get("name") for f in expected.get("fields", [])]
        if ours != theirs:
            return f"fields {theirs} in C++, {ours} in Python"
        for e, d in zip(expected["fields"], described["fields"]):
            why = _mismatch(e.get("schema"), d["schema"])
            if why:
                return f"field {e['name']}: {why}"
    return None


def _cpp_spelling(schema: Any) -> str:
    from .schema import from_schema, BadSchema
    try:
        return from_schema(schema).name
    except BadSchema:
        return repr(schema)


def compare(expected_methods: list[dict[str, Any]], cls: type, node: str = "the node",
            has_run: bool | None = None) -> list[str]:
    """Every difference between the methods C++ declares for a Python node
    (describe's "methods") and what `cls`'s hints say, as messages that
    name the node, the method and both types. Empty when they agree.
    `has_run`: whether the C++ interface declares `void run();` (None: not
    compared)."""
    problems = _run_problems(cls, node, has_run)
    service = cls.__name__
    for entry in expected_methods:
        name = entry["name"]
        where = f"{node}: {service}.{name}"
        member = getattr(cls, name, None)
        if member is None or not callable(member):
            problems.append(f"{where}: C++ declares {entry.get('signature', name)}, "
                            f"and the Python class {service} has no method {name}")
            continue
        try:
            ours = describe_method(cls, name)
        except HintError as e:
            problems.append(f"{node}: {e}")
            continue
        if ours["arity"] != entry["arity"]:
            declared = f" ({entry['signature']})" if "signature" in entry else ""
            problems.append(f"{where}: C++ declares {entry['arity']} parameter(s){declared}, "
                            f"Python takes {ours['arity']} ({ours['signature']})")
            continue
        for i, (theirs, d) in enumerate(zip(entry["params"], ours["params"])):
            why = _mismatch(theirs, d)
            if why:
                problems.append(f"{where}, parameter {i + 1}: C++ {_cpp_spelling(theirs)} against "
                                f"Python {ours['hints']['params'][i]} ({why})")
        why = _mismatch(entry["result"], ours["result"])
        if why:
            problems.append(f"{where}, result: C++ {_cpp_spelling(entry['result'])} against "
                            f"Python {ours['hints']['result']} ({why})")
    return problems


def _run_problems(cls: type, node: str, has_run: bool | None) -> list[str]:
    """A run() on one side only: the launch would start a loop that is not
    there, or never start one that is."""
    if has_run is None:
        return []
    service = cls.__name__
    has = callable(getattr(cls, "run", None))
    if has_run and not has:
        return [f"{node}: {service}.run: C++ declares void run(), and the Python class {service} "
                f"has no method run: add run() to the class, or remove `void run();` from the "
                f"C++ interface struct"]
    if has and not has_run:
        return [f"{node}: {service}.run: the Python class {service} has run(), and C++ declares "
                f"none: declare `void run();` in the C++ interface struct, or rename the method "
                f"if it is not the node's loop"]
    return []
