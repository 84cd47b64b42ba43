"""The types of a node's methods, from the schemas `GET /lp/v1/describe` gives.

A node describes each parameter and result with a schema of its wire form
(docs/protocol.md#introspection): {"kind": "integer", "bits": 64, "signed":
true}, {"kind": "typed_array", "element": {"kind": "floating", "bits": 32}},
a struct's fields, a map's value ... This module turns each schema into a
type that checks a Python argument before it is sent (a TypeError or
ValueError naming the argument, as the node's own checks would answer 400)
and gives its wire form, and that turns a result's wire form into Python
values: typed arrays into numpy arrays, tensors into shaped arrays, tuples
into tuples.

A schema's "type" is the C++ spelling, for messages only: every check comes
from the rest of the schema, and a schema without "type" checks the same. A
kind this module does not know (from a newer node), and the kinds whose form
the C++ type's own to_json decides ("json", "nlohmann"), are `Opaque`: the
argument goes as given (numpy values made plain) and the node checks it.
"""

from __future__ import annotations

import array
import collections.abc
import dataclasses
import math
from typing import Any

from .. import _protocol as protocol
from .._packages import numpy as np
from . import typed_arrays
from .typed_arrays import Element, TypedArray


def describe_value(value: Any) -> str:
    """A short description of a value for an error message."""
    if np is not None and isinstance(value, np.ndarray):
        return f"a numpy array of {value.dtype} with shape {tuple(value.shape)}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _mismatch(where: str, ctype: CppType, expected: str, value: Any) -> TypeError:
    return TypeError(f"{where}: expected {expected} ({ctype.name}), got {describe_value(value)}")


class CppType:
    """A C++ type: `to_wire` checks an argument and gives its wire form,
    `from_wire` turns a decoded result into Python values. `name` is how
    messages call it."""

    element: Element | None = None  # a number type's, as an element of typed arrays

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def number(self) -> Element:
        """The element of a typed array of this type, a number's (from_schema
        makes typed arrays and tensors only of numbers)."""
        assert self.element is not None, f"{self.name} is not a number type"
        return self.element

    def to_wire(self, value: Any, where: str) -> Any:
        raise NotImplementedError

    def from_wire(self, value: Any) -> Any:
        return value


class Void(CppType):
    def from_wire(self, value: Any) -> Any:
        return None


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return np is not None and isinstance(value, (np.integer, np.floating))


class Bool(CppType):
    def to_wire(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
            return bool(value)
        raise _mismatch(where, self, "True or False", value)

    def from_wire(self, value: Any) -> Any:
        return bool(value) if isinstance(value, bool) else value


class Integer(CppType):
    """An integer, or an enum as its integer."""

    def __init__(self, name: str, bits: int, signed: bool) -> None:
        super().__init__(name)
        self.element = Element("i" if signed else "u", bits // 8) if bits in (8, 16, 32, 64) else None
        self.low = -(1 << (bits - 1)) if signed else 0
        self.high = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def to_wire(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not (
            isinstance(value, int) or (np is not None and isinstance(value, np.integer))
        ):
            # 1.0 too: the node takes no float for an integer, as a
            # compiler would warn about the narrowing.
            raise _mismatch(where, self, "an integer", value)
        value = int(value)
        if not self.low <= value <= self.high:
            raise ValueError(
                f"{where}: {value} is out of range for {self.name} [{self.low}, {self.high}]"
            )
        return value


class Floating(CppType):
    def __init__(self, name: str, bits: int) -> None:
        super().__init__(name)
        self.element = Element("f", bits // 8) if bits in (32, 64) else None
        # A long double travels as a float64, which holds every value it takes.
        self.largest = {32: 3.4028234663852886e38, 64: 1.7976931348623157e308}.get(bits)

    def to_wire(self, value: Any, where: str) -> Any:
        if not _is_number(value):
            raise _mismatch(where, self, "a number", value)
        try:
            number = float(value)
        except OverflowError:  # an int beyond any double
            raise ValueError(f"{where}: {value} is out of range for {self.name}") from None
        if self.largest and math.isfinite(number) and abs(number) > self.largest:
            raise ValueError(f"{where}: {value} is out of range for {self.name}")
        return number

    def from_wire(self, value: Any) -> Any:
        return float(value) if _is_number(value) else value


class String(CppType):
    def to_wire(self, value: Any, where: str) -> Any:
        if not isinstance(value, str):
            raise _mismatch(where, self, "a str", value)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            # A lone surrogate: neither JSON nor CBOR text can hold it.
            raise ValueError(f"{where}: the string is not valid Unicode ({e})") from None
        return value


def _sequence_items(value: Any) -> list[Any] | None:
    """The items of a list-like argument, or None if it is not one (a str,
    bytes or a mapping is not)."""
    if isinstance(value, (str, bytes, bytearray, collections.abc.Mapping)):
        return None
    if np is not None and isinstance(value, np.ndarray):
        return value.tolist() if value.ndim > 0 else None
    if isinstance(value, (collections.abc.Sequence, collections.abc.Set, array.array)):
        return list(value)
    return None


class Sequence(CppType):
    """std::vector and std::set: a list on the wire, and for a std::vector
    of numbers (a "typed_array") a typed array in CBOR (`typed`)."""

    def __init__(self, name: str, element_type: CppType, typed: bool) -> None:
        super().__init__(name)
        self.element_type = element_type
        self.typed = typed

    def to_wire(self, value: Any, where: str) -> Any:
        if self.typed:
            packed = self._typed_array(value, where)
            if packed is not None:
                return packed
        items = _sequence_items(value)
        if items is None:
            raise _mismatch(where, self, "a list", value)
        convert = self.element_type.to_wire
        return [convert(item, f"{where}, element {i}") for i, item in enumerate(items)]

    def _typed_array(self, value: Any, where: str) -> TypedArray | None:
        element = self.element_type.number()
        if np is not None and isinstance(value, np.ndarray):
            if value.ndim != 1:
                raise TypeError(
                    f"{where}: expected a 1-D array ({self.name}), got {describe_value(value)}; "
                    "an lp::tensor parameter takes a shape"
                )
            return ndarray_to_typed(value, element, where, self.name)
        packed = typed_arrays.from_buffer_object(value, element)
        if packed is None and isinstance(value, (array.array, bytes, bytearray, memoryview)):
            raise _mismatch(where, self, f"{element.name()} elements", value)
        return packed

    def from_wire(self, value: Any) -> Any:
        if self.typed:
            return typed_from_wire(value, self.element_type.number())
        if isinstance(value, list):
            convert = self.element_type.from_wire
            return [convert(item) for item in value]
        return value


def ndarray_to_typed(value: Any, element: Element, where: str, type_name: str) -> TypedArray:
    """A numpy array as a TypedArray of `element`, converted only when the
    conversion loses nothing (numpy's "safe" casting), sharing its memory
    when it is contiguous in this machine's byte order."""
    target = element.numpy_dtype()
    if value.dtype != target:
        if value.dtype == np.bool_ or not np.can_cast(value.dtype, target, "safe"):
            raise TypeError(
                f"{where}: expected {element.name()} elements ({type_name}), got an array of "
                f"{value.dtype}; convert it with .astype(numpy.{element.name()})"
            )
        value = value.astype(target)
    flat = np.ascontiguousarray(value).reshape(-1)  # a copy only if the layout needs one
    return TypedArray(element, typed_arrays.byte_view(flat), flat)


def typed_from_wire(value: Any, element: Element) -> Any:
    """A vector of numbers as it came (a typed array already decoded, or a
    JSON list) as a numpy array of its element type, or a list without
    numpy."""
    if np is None:
        return value
    if isinstance(value, np.ndarray):
        target = element.numpy_dtype()
        return value if value.dtype == target else value.astype(target)
    if isinstance(value, list):
        try:
            return np.array(value, dtype=element.numpy_dtype())
        except (TypeError, ValueError, OverflowError):
            return value
    return value


class FixedArray(CppType):
    """std::array<T, N>: N values. It goes as a list, which every node reads;
    a node may answer with a typed array when T is a number (`typed`), so
    such a result becomes what a vector of numbers becomes (an ndarray)."""

    def __init__(self, name: str, element_type: CppType, size: int, typed: bool) -> None:
        super().__init__(name)
        self.element_type = element_type
        self.size = size
        self.typed = typed

    def to_wire(self, value: Any, where: str) -> Any:
        items = _sequence_items(value)
        if items is None or len(items) != self.size:
            raise _mismatch(where, self, f"a list of {self.size}", value)
        convert = self.element_type.to_wire
        return [convert(item, f"{where}, element {i}") for i, item in enumerate(items)]

    def from_wire(self, value: Any) -> Any:
        if self.typed:
            return typed_from_wire(value, self.element_type.number())
        if isinstance(value, list):
            return [self.element_type.from_wire(item) for item in value]
        return value


class Map(CppType):
    """std::map and std::unordered_map with std::string keys (the only keys
    a C++ service may use): an object."""

    def __init__(self, name: str, key_type: CppType, value_type: CppType) -> None:
        super().__init__(name)
        self.key_type = key_type
        self.value_type = value_type

    def to_wire(self, value: Any, where: str) -> Any:
        if not isinstance(value, collections.abc.Mapping):
            raise _mismatch(where, self, "a dict", value)
        convert = self.value_type.to_wire
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _mismatch(f"{where}, a key", self.key_type, "a str", key)
            out[key] = convert(item, f"{where}, key {key!r}")
        return out

    def from_wire(self, value: Any) -> Any:
        if isinstance(value, dict):
            item = self.value_type.from_wire
            return {k: item(v) for k, v in value.items()}
        return value


class Tuple(CppType):
    """std::pair and std::tuple: a list on the wire, a tuple in Python."""

    def __init__(self, name: str, element_types: list[CppType]) -> None:
        super().__init__(name)
        self.element_types = element_types

    def to_wire(self, value: Any, where: str) -> Any:
        items = _sequence_items(value)
        if items is None or len(items) != len(self.element_types):
            raise _mismatch(where, self, f"a tuple of {len(self.element_types)}", value)
        return [
            t.to_wire(item, f"{where}, element {i}")
            for i, (t, item) in enumerate(zip(self.element_types, items))
        ]

    def from_wire(self, value: Any) -> Any:
        if isinstance(value, list) and len(value) == len(self.element_types):
            return tuple(t.from_wire(v) for t, v in zip(self.element_types, value))
        return value


class Optional(CppType):
    def __init__(self, name: str, inner: CppType) -> None:
        super().__init__(name)
        self.inner = inner

    def to_wire(self, value: Any, where: str) -> Any:
        return None if value is None else self.inner.to_wire(value, where)

    def from_wire(self, value: Any) -> Any:
        return None if value is None else self.inner.from_wire(value)


class Tensor(CppType):
    """lp::tensor<T>: {"shape": [...], "data": [...]}, the data a typed
    array in CBOR. A numpy array of any shape goes out as one and comes back
    as one; without numpy the dict itself does."""

    def __init__(self, name: str, element_type: CppType) -> None:
        super().__init__(name)
        self.element_type = element_type

    def to_wire(self, value: Any, where: str) -> Any:
        element = self.element_type.number()
        if np is not None and isinstance(value, np.ndarray):
            return {"data": ndarray_to_typed(value, element, where, self.name),
                    "shape": list(value.shape)}
        if isinstance(value, collections.abc.Mapping) and "shape" in value and "data" in value:
            shape = Sequence("shape", Integer("std::size_t", 64, False), False).to_wire(
                value["shape"], f"{where}, member 'shape'"
            )
            data = Sequence(self.name, self.element_type, True).to_wire(
                value["data"], f"{where}, member 'data'"
            )
            count = data.nbytes // element.size if isinstance(data, TypedArray) else len(data)
            if count != math.prod(shape):
                raise ValueError(
                    f"{where}: a tensor of shape {shape} needs {math.prod(shape)} values, got {count}"
                )
            return {"data": data, "shape": shape}
        expected = "a numpy array or " if np is not None else ""
        raise _mismatch(where, self, expected + "a dict with 'shape' and 'data'", value)

    def from_wire(self, value: Any) -> Any:
        if not (isinstance(value, dict) and "shape" in value and "data" in value):
            return value
        data = typed_from_wire(value["data"], self.element_type.number())
        if np is None or not isinstance(data, np.ndarray):
            return {"shape": value["shape"], "data": data}
        try:
            return data.reshape(value["shape"])
        except (TypeError, ValueError):
            return value


class Struct(CppType):
    """A C++ struct (a plain one, or BOOST_HANA_DEFINE_STRUCT): a dict, or a
    dataclass, with every member, each checked as its own type. Other keys
    go as given; the node ignores them."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.fields: dict[str, CppType] = {}  # name -> type, in declaration order; filled once built

    def to_wire(self, value: Any, where: str) -> Any:
        # A dataclass stands for a struct as its hint does (hints.py).
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if not isinstance(value, collections.abc.Mapping):
            raise _mismatch(where, self, "a dict", value)
        out = {}
        for name, member in self.fields.items():
            if name not in value:
                raise _mismatch(where, self, f"a dict with member '{name}'", value)
            out[name] = member.to_wire(value[name], f"{where}, member '{name}'")
        for key, item in value.items():
            if key not in out:
                out[key] = plain(item)
        return out

    def from_wire(self, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: self.fields[k].from_wire(v) if k in self.fields else v for k, v in value.items()}


class Opaque(CppType):
    """A type whose form the schema does not give (lp::json, a type with its
    own to_json, a kind this client does not know): the argument goes as
    given, with numpy values made plain."""

    def to_wire(self, value: Any, where: str) -> Any:
        return plain(value)


def plain(value: Any) -> Any:
    """`value` with numpy arrays and scalars, tuples and array.arrays turned
    into the lists and numbers every JSON or CBOR encoder writes."""
    if isinstance(value, (str, int, float, bool, type(None), TypedArray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, array.array):
        return value.tolist()
    if np is not None and isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


# --- From a schema. ---------------------------------------------------------

class BadSchema(ValueError):
    """A schema that is not what docs/protocol.md describes."""


def _name(schema: dict[str, Any], parts: list[str] | tuple[str, ...]) -> str:
    """How messages call the type: its C++ spelling when the node gave one,
    else a name made from the schema (`parts`: the names of its parts)."""
    spelling = schema.get("type")
    if isinstance(spelling, str) and spelling:
        return spelling
    kind = schema.get("kind")
    bits: Any = schema.get("bits")
    if kind in (protocol.KIND_INTEGER, protocol.KIND_ENUMERATION):
        return f"std::{'' if schema.get('signed') else 'u'}int{bits}_t"
    if kind == protocol.KIND_FLOATING:
        return {32: "float", 64: "double"}.get(bits, "long double")
    if kind in (protocol.KIND_TYPED_ARRAY, protocol.KIND_SEQUENCE):
        if "size" in schema:
            return f"std::array<{parts[0]}, {schema['size']}>"
        return f"std::{'set' if schema.get('unique') else 'vector'}<{parts[0]}>"
    simple = {protocol.KIND_BOOLEAN: "bool", protocol.KIND_STRING: "std::string",
              protocol.KIND_NOTHING: "void", protocol.KIND_JSON: "lp::json",
              protocol.KIND_RECORD: "a struct", protocol.KIND_NLOHMANN: "a type with its own to_json"}
    if kind in simple:
        return simple[kind]
    shapes = {protocol.KIND_OPTIONAL: "std::optional<{}>", protocol.KIND_TENSOR: "lp::tensor<{}>",
              protocol.KIND_MAP: "std::map<{}, {}>", protocol.KIND_TUPLE: "std::tuple<{}>"}
    if kind == protocol.KIND_TUPLE:
        return shapes[kind].format(", ".join(parts))
    if kind in shapes:
        return shapes[kind].format(*parts)
    return f"a {kind}"


def _part(schema: dict[str, Any], key: str) -> dict[str, Any]:
    part = schema.get(key)
    if not isinstance(part, dict):
        raise BadSchema(f"a {schema.get('kind')} schema without its {key!r}")
    return part


def from_schema(schema: Any, _structs: tuple[Struct, ...] = ()) -> CppType:
    """The type a schema describes. `_structs`: the structs being built
    around it, for a struct inside itself ({"kind": "struct",
    "recursive": n}: the n-th around it)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("kind"), str):
        raise BadSchema(f"a schema is a dict with a 'kind', not {describe_value(schema)}")
    kind = schema["kind"]

    def build(key: str) -> CppType:
        return from_schema(_part(schema, key), _structs)

    if kind == protocol.KIND_NOTHING:
        return Void(_name(schema, ()))
    if kind == protocol.KIND_BOOLEAN:
        return Bool(_name(schema, ()))
    if kind in (protocol.KIND_INTEGER, protocol.KIND_ENUMERATION):
        bits = schema.get("bits")
        if bits not in (8, 16, 32, 64) or not isinstance(schema.get("signed"), bool):
            raise BadSchema(f"an {kind} schema needs bits 8, 16, 32 or 64 and signed: {schema}")
        return Integer(_name(schema, ()), bits, schema["signed"])
    if kind == protocol.KIND_FLOATING:
        if not isinstance(schema.get("bits"), int):
            raise BadSchema(f"a floating schema needs its bits: {schema}")
        return Floating(_name(schema, ()), schema["bits"])
    if kind == protocol.KIND_STRING:
        return String(_name(schema, ()))
    if kind == protocol.KIND_OPTIONAL:
        inner = build("value")
        return Optional(_name(schema, (inner.name,)), inner)
    if kind in (protocol.KIND_TYPED_ARRAY, protocol.KIND_SEQUENCE, protocol.KIND_TENSOR):
        element = build("element")
        name = _name(schema, (element.name,))
        typed = kind != protocol.KIND_SEQUENCE
        if typed and getattr(element, "element", None) is None:
            raise BadSchema(f"a {kind} of {element.name}, which is no number type of a typed array")
        if kind == protocol.KIND_TENSOR:
            return Tensor(name, element)
        if "size" in schema:
            return FixedArray(name, element, schema["size"], typed)
        return Sequence(name, element, typed)
    if kind == protocol.KIND_MAP:
        key, value = build("key"), build("value")
        return Map(_name(schema, (key.name, value.name)), key, value)
    if kind == protocol.KIND_TUPLE:
        items = schema.get("items")
        if not isinstance(items, list):
            raise BadSchema("a tuple schema without its 'items'")
        types = [from_schema(item, _structs) for item in items]
        return Tuple(_name(schema, [t.name for t in types]), types)
    if kind == protocol.KIND_RECORD:
        if "recursive" in schema:
            up = schema["recursive"]
            if not (isinstance(up, int) and 1 <= up <= len(_structs)):
                raise BadSchema(f"a recursive struct {up!r} levels up, inside {len(_structs)}")
            return _structs[-up]
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise BadSchema("a struct schema without its 'fields'")
        struct = Struct(_name(schema, ()))
        for field in fields:
            if not (isinstance(field, dict) and isinstance(field.get("name"), str)):
                raise BadSchema(f"a struct's field is a dict with a 'name', not {describe_value(field)}")
            struct.fields[field["name"]] = from_schema(_part(field, "schema"), (*_structs, struct))
        return struct
    return Opaque(_name(schema, ()))  # json, nlohmann, or a kind from a newer node


def method_types(entry: dict[str, Any]) -> tuple[list[CppType], CppType]:
    """(parameter types, result type) of a method as describe lists it."""
    params = entry["params"]
    if not isinstance(params, list) or len(params) != entry["arity"]:
        raise BadSchema(f"{entry['name']} has arity {entry['arity']} and "
                        f"{len(params) if isinstance(params, list) else 'no list of'} parameter schemas")
    return [from_schema(p) for p in params], from_schema(entry["result"])
