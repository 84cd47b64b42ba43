"""The C++ types of a node's methods, read from `GET /lp/v1/describe`.

A node describes each method with its C++ signature, as the compiler spells
it ("long int add(long int)", "std::vector<float> echo(std::vector<float>)").
This module parses those spellings into types that check a Python argument
before it is sent (a TypeError or ValueError naming the argument, as the
node's own checks would answer 400) and turn it into its wire form, and turn
a result's wire form into Python values: typed arrays into numpy arrays,
tensors into shaped arrays, tuples into tuples, maps with non-string keys into
dicts.

The wire forms are those of docs/protocol.md#values. A type this module does
not know (a struct, a user type with its own to_json) is `Opaque`: its
argument goes as given (dicts, lists, numbers; numpy values become plain
ones) and the node checks it.

Spellings come from g++ or clang++ on a 64-bit Linux (LP64: `long` has 64
bits). A signature that does not parse makes every parameter Opaque: the
checks are a convenience, never a reason to refuse a call.
"""

import array
import collections.abc
import math
import platform
import re

from . import typed_arrays
from .optional_packages import numpy as np
from .typed_arrays import Element, TypedArray


def describe_value(value):
    """A short description of a value for an error message."""
    if np is not None and isinstance(value, np.ndarray):
        return f"a numpy array of {value.dtype} with shape {tuple(value.shape)}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _mismatch(where, ctype, expected, value):
    return TypeError(f"{where}: expected {expected} ({ctype.name}), got {describe_value(value)}")


class CppType:
    """A C++ type: `to_wire` checks an argument and gives its wire form,
    `from_wire` turns a decoded result into Python values."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"

    def to_wire(self, value, where):
        raise NotImplementedError

    def from_wire(self, value):
        return value


class Void(CppType):
    def from_wire(self, value):
        return None


def _is_number(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return np is not None and isinstance(value, (np.integer, np.floating))


class Bool(CppType):
    def to_wire(self, value, where):
        if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
            return bool(value)
        raise _mismatch(where, self, "True or False", value)

    def from_wire(self, value):
        return bool(value) if isinstance(value, bool) else value


class Integer(CppType):
    def __init__(self, name, bits, signed):
        super().__init__(name)
        self.element = Element("i" if signed else "u", bits // 8)
        self.low = -(1 << (bits - 1)) if signed else 0
        self.high = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def to_wire(self, value, where):
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
    def __init__(self, name, bits):
        super().__init__(name)
        self.element = Element("f", bits // 8) if bits in (32, 64) else None
        self.largest = {32: 3.4028234663852886e38, 64: 1.7976931348623157e308}.get(bits)

    def to_wire(self, value, where):
        if not _is_number(value):
            raise _mismatch(where, self, "a number", value)
        try:
            number = float(value)
        except OverflowError:  # an int beyond any double
            raise ValueError(f"{where}: {value} is out of range for {self.name}") from None
        if self.largest and math.isfinite(number) and abs(number) > self.largest:
            raise ValueError(f"{where}: {value} is out of range for {self.name}")
        return number

    def from_wire(self, value):
        return float(value) if _is_number(value) else value


class String(CppType):
    def to_wire(self, value, where):
        if not isinstance(value, str):
            raise _mismatch(where, self, "a str", value)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            # A lone surrogate: neither JSON nor CBOR text can hold it.
            raise ValueError(f"{where}: the string is not valid Unicode ({e})") from None
        return value


def _sequence_items(value):
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
    of numbers a typed array in CBOR (`typed`)."""

    def __init__(self, name, element_type, typed):
        super().__init__(name)
        self.element_type = element_type
        self.typed = typed

    def to_wire(self, value, where):
        if self.typed:
            packed = self._typed_array(value, where)
            if packed is not None:
                return packed
        items = _sequence_items(value)
        if items is None:
            raise _mismatch(where, self, "a list", value)
        convert = self.element_type.to_wire
        return [convert(item, f"{where}, element {i}") for i, item in enumerate(items)]

    def _typed_array(self, value, where):
        element = self.element_type.element
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

    def from_wire(self, value):
        if self.typed:
            return typed_from_wire(value, self.element_type.element)
        if isinstance(value, list):
            convert = self.element_type.from_wire
            return [convert(item) for item in value]
        return value


def ndarray_to_typed(value, element, where, type_name):
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


def typed_from_wire(value, element):
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
    a node may answer with a typed array when T is a number, so such a
    result becomes what a vector of numbers becomes (an ndarray)."""

    def __init__(self, name, element_type, size):
        super().__init__(name)
        self.element_type = element_type
        self.size = size
        self.typed = getattr(element_type, "element", None) is not None

    def to_wire(self, value, where):
        items = _sequence_items(value)
        if items is None or len(items) != self.size:
            raise _mismatch(where, self, f"a list of {self.size}", value)
        convert = self.element_type.to_wire
        return [convert(item, f"{where}, element {i}") for i, item in enumerate(items)]

    def from_wire(self, value):
        if self.typed:
            return typed_from_wire(value, self.element_type.element)
        if isinstance(value, list):
            return [self.element_type.from_wire(item) for item in value]
        return value


class Map(CppType):
    """std::map and std::unordered_map with std::string keys (the only keys
    a C++ service may use): an object."""

    def __init__(self, name, key_type, value_type):
        super().__init__(name)
        self.key_type = key_type
        self.value_type = value_type

    def to_wire(self, value, where):
        if not isinstance(value, collections.abc.Mapping):
            raise _mismatch(where, self, "a dict", value)
        convert = self.value_type.to_wire
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _mismatch(f"{where}, a key", self.key_type, "a str", key)
            out[key] = convert(item, f"{where}, key {key!r}")
        return out

    def from_wire(self, value):
        if isinstance(value, dict):
            item = self.value_type.from_wire
            return {k: item(v) for k, v in value.items()}
        return value


class Tuple(CppType):
    """std::pair and std::tuple: a list on the wire, a tuple in Python."""

    def __init__(self, name, element_types):
        super().__init__(name)
        self.element_types = element_types

    def to_wire(self, value, where):
        items = _sequence_items(value)
        if items is None or len(items) != len(self.element_types):
            raise _mismatch(where, self, f"a tuple of {len(self.element_types)}", value)
        return [
            t.to_wire(item, f"{where}, element {i}")
            for i, (t, item) in enumerate(zip(self.element_types, items))
        ]

    def from_wire(self, value):
        if isinstance(value, list) and len(value) == len(self.element_types):
            return tuple(t.from_wire(v) for t, v in zip(self.element_types, value))
        return value


class Optional(CppType):
    def __init__(self, name, inner):
        super().__init__(name)
        self.inner = inner

    def to_wire(self, value, where):
        return None if value is None else self.inner.to_wire(value, where)

    def from_wire(self, value):
        return None if value is None else self.inner.from_wire(value)


class Tensor(CppType):
    """lp::tensor<T>: {"shape": [...], "data": [...]}, the data a typed
    array in CBOR. A numpy array of any shape goes out as one and comes back
    as one; without numpy the dict itself does."""

    def __init__(self, name, element_type):
        super().__init__(name)
        self.element_type = element_type

    def to_wire(self, value, where):
        element = self.element_type.element
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

    def from_wire(self, value):
        if not (isinstance(value, dict) and "shape" in value and "data" in value):
            return value
        data = typed_from_wire(value["data"], self.element_type.element)
        if np is None or not isinstance(data, np.ndarray):
            return {"shape": value["shape"], "data": data}
        try:
            return data.reshape(value["shape"])
        except (TypeError, ValueError):
            return value


class Opaque(CppType):
    """A type this module does not know, such as a struct: the argument goes
    as given, with numpy values made plain (a numpy array becomes a list:
    the client cannot tell whether the struct takes typed arrays)."""

    def to_wire(self, value, where):
        return plain(value)


def plain(value):
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


# --- Parsing the compiler's spellings. -------------------------------------

_CHAR_SIGNED = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
_FUNDAMENTAL_WORDS = {"unsigned", "signed", "short", "long", "int", "char", "bool", "float", "double"}
_ALIASES = {  # in case a compiler spells an alias instead of what it names
    "std::int8_t": ("signed char",), "std::int16_t": ("short",), "std::int32_t": ("int",),
    "std::int64_t": ("long",), "std::uint8_t": ("unsigned char",),
    "std::uint16_t": ("unsigned short",), "std::uint32_t": ("unsigned",),
    "std::uint64_t": ("unsigned long",), "std::size_t": ("unsigned long",),
    "std::ptrdiff_t": ("long",),
}
_TOKEN = re.compile(r"\s*(?:((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)|(\d+)[uUlL]*|(.))")


class _Unparsed(Exception):
    pass


def _fundamental(name, words):
    """The type of a spelling made of fundamental words ("long unsigned int")."""
    longs = words.count("long")
    if "bool" in words:
        return Bool(name)
    if "float" in words:
        return Floating(name, 32)
    if "double" in words:
        return Floating(name, 128 if longs else 64)
    unsigned = "unsigned" in words
    if "char" in words:
        signed = not unsigned and ("signed" in words or _CHAR_SIGNED)
        return Integer(name, 8, signed)
    if "short" in words:
        return Integer(name, 16, not unsigned)
    return Integer(name, 64 if longs else 32, not unsigned)


class _Parser:
    def __init__(self, text):
        self.tokens = []
        for match in _TOKEN.finditer(text):
            word, number, other = match.groups()
            if word is not None:
                self.tokens.append(("word", word.lstrip(":") if word.startswith("::") else word))
            elif number is not None:
                self.tokens.append(("number", int(number)))
            elif other is not None and not other.isspace():
                self.tokens.append(("punct", other))
        self.at = 0
        self.text = text

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None)

    def take(self):
        token = self.peek()
        self.at += 1
        return token

    def expect(self, punct):
        if self.take() != ("punct", punct):
            raise _Unparsed()

    def argument(self):
        """A template argument: a type, or a number (std::array's size)."""
        kind, value = self.peek()
        if kind == "number":
            self.take()
            return value
        return self.type()

    def type(self):
        start = self.at
        words = []
        while self.peek()[0] == "word":
            words.append(self.take()[1])
            if words[-1] not in _FUNDAMENTAL_WORDS and words[-1] != "const":
                break
        words = [w for w in words if w != "const"]
        if not words:
            raise _Unparsed()
        arguments = []
        if self.peek() == ("punct", "<"):
            self.take()
            while True:
                arguments.append(self.argument())
                kind, value = self.take()
                if (kind, value) == ("punct", ">"):
                    break
                if (kind, value) != ("punct", ","):
                    raise _Unparsed()
        while self.peek() in (("word", "const"),):
            self.take()
        if self.peek() in (("punct", "*"), ("punct", "&")) or (
            self.peek()[0] == "word" and words[-1] not in _FUNDAMENTAL_WORDS
        ):
            raise _Unparsed()
        spelling = self._spelling(start)
        return _make(spelling, words, arguments)

    def _spelling(self, start):
        parts = []
        for kind, value in self.tokens[start:self.at]:
            text = str(value)
            if parts and kind == "word" and parts[-1][0] == "word":
                parts.append((kind, " " + text))
            elif kind == "punct" and value == ",":
                parts.append((kind, ", "))
            else:
                parts.append((kind, text))
        return "".join(p for _, p in parts)


def _normalize(word):
    for inner in ("std::__cxx11::", "std::__1::", "std::__debug::"):
        word = word.replace(inner, "std::")
    return word


def _make(spelling, words, arguments):
    if all(w in _FUNDAMENTAL_WORDS for w in words):
        if arguments:
            raise _Unparsed()
        return _fundamental(spelling, words)
    name = _normalize(words[-1]) if len(words) == 1 else None
    if name is None:
        raise _Unparsed()
    alias = _ALIASES.get(name) or _ALIASES.get("std::" + name)
    if alias:
        return _fundamental(spelling, alias[0].split())
    types = [a for a in arguments if isinstance(a, CppType)]
    if name in ("std::string", "std::basic_string"):
        if name == "std::basic_string" and (not types or types[0].name != "char"):
            return Opaque(spelling)
        return String(spelling)
    if name == "std::vector" and types:
        element = types[0]
        typed = (
            name == "std::vector"
            and isinstance(element, (Integer, Floating))
            and getattr(element, "element", None) is not None
            and (len(arguments) == 1 or (len(types) == 2 and types[1].name.startswith("std::allocator")))
        )
        return Sequence(spelling, element, typed)
    if name == "std::set" and types:
        return Sequence(spelling, types[0], False)
    if name == "std::array" and len(arguments) == 2 and isinstance(arguments[1], int) and types:
        return FixedArray(spelling, types[0], arguments[1])
    if name in ("std::map", "std::unordered_map") and len(types) >= 2 and isinstance(types[0], String):
        return Map(spelling, types[0], types[1])
    if name in ("std::pair", "std::tuple") and len(types) == len(arguments):
        return Tuple(spelling, types)
    if name == "std::optional" and len(types) == 1:
        return Optional(spelling, types[0])
    if name == "lp::tensor" and len(types) == 1 and getattr(types[0], "element", None) is not None:
        return Tensor(spelling, types[0])
    return Opaque(spelling)


def parse_type(text):
    """The type a compiler's spelling names; Opaque when it does not parse."""
    text = text.strip()
    if text == "void":
        return Void(text)
    parser = _Parser(text)
    try:
        parsed = parser.type()
        if parser.at != len(parser.tokens):
            raise _Unparsed()
        return parsed
    except _Unparsed:
        return Opaque(text)


def _split_top_level(text):
    """Splits a parameter list at the commas outside any <...> or (...)."""
    parts, depth, current = [], 0, ""
    for c in text:
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts]


def parse_signature(name, arity, signature):
    """(parameter types, result type) of `signature` ("R name(P1, P2)"); a
    spelling that does not parse gives Opaque types, `arity` of them."""
    marker = signature.find(f" {name}(")
    if marker < 0 or not signature.endswith(")"):
        return [Opaque("?")] * arity, Opaque("?")
    result = parse_type(signature[:marker])
    params = _split_top_level(signature[marker + len(name) + 2 : -1])
    if len(params) != arity:
        return [Opaque("?")] * arity, result
    return [parse_type(p) for p in params], result
