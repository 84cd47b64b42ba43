"""Values with no schema: the arguments and results of a Launchpad
program's nodes, whose methods are untyped, as Courier's
(docs/coming_from_launchpad.md).

A value goes as it went in: None, bools, ints, floats, strings, bytes,
lists, tuples and dicts (keys of those plain types, or tuples of them),
and numpy arrays of bools, integers, floats and complex numbers of any
shape, and numpy scalars, nested. CBOR carries them; what it has no type for
is tagged (protocol.toml's array_tag and untyped_tag):

- a tuple, tag `tuple` around its array;
- a one-dimensional array of integers or floats, an RFC 8746 typed array
  (as a C++ std::vector travels); of bools, RFC 8746's homogeneous array
  (tag 41) of true and false; of complex numbers, tag `complex` around a
  typed array of floats, real and imaginary parts in turn;
- an array of another shape (none too: a 0-d array), RFC 8746's row-major
  array (tag 40), [shape, the one-dimensional array of its elements];
- a numpy scalar, tag `scalar` around a one-element array of its dtype;
- a call's keyword arguments, tag `keywords` around a map, its last
  argument.

to_wire raises a TypeError naming the type of what it cannot carry, before
anything is sent; from_wire raises a ValueError naming what a body holds
that is none of these (a node answers it 400). Nothing is unpickled. In
JSON (a call by hand) values are JSON's: tuples and arrays go as lists.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _protocol as protocol
from .._packages import cbor2
from .._packages import numpy as np
from .typed_arrays import Element, TypedArray, byte_view

_PLAIN = (type(None), bool, int, float, str, bytes)
_KEYS = "None, bools, ints, floats, strings, bytes and tuples of them"
_TUPLE = protocol.UNTYPED_TAG_TUPLE
_KEYWORDS = protocol.UNTYPED_TAG_KEYWORDS
_SCALAR = protocol.UNTYPED_TAG_SCALAR
_COMPLEX = protocol.UNTYPED_TAG_COMPLEX
_SHAPED = protocol.ARRAY_TAG_ROW_MAJOR
_BOOLS = protocol.ARRAY_TAG_HOMOGENEOUS
# Deeper than any value a program means to send; a body nested deeper (or
# cyclic, through CBOR's shared references) is refused, not recursed into.
MAX_DEPTH = 200
MAX_DIMENSIONS = 32  # numpy's own limit


def _name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _cannot(where: str, value: Any, detail: str = "") -> TypeError:
    return TypeError(f"{where} is of type {_name(value)}{detail}, which cannot cross the wire; a "
                     "Launchpad call takes None, bools, ints, floats, strings, bytes, lists, "
                     "tuples, dicts and numpy arrays of bools and numbers, nested")


# --- Out. -------------------------------------------------------------------

def to_wire(value: Any, where: str = "a value", cbor: bool = True) -> Any:
    """`value` as codec.encode takes it; TypeError naming the type of what
    the wire cannot carry. cbor=False: the JSON form of a reply to a call
    made in JSON (tuples and arrays as lists, keys strings)."""
    return _out(value, where, cbor, 0)


def keywords_to_wire(kwargs: dict[str, Any], where: str) -> Any:
    """A call's keyword arguments as its last argument (CBOR only)."""
    return cbor2.CBORTag(_KEYWORDS, {k: _out(v, f"keyword argument {k!r} of {where}", True, 0)
                                     for k, v in kwargs.items()})


def _out(value: Any, where: str, cbor: bool, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise TypeError(f"{where} is nested more than {MAX_DEPTH} deep (or holds itself)")
    kind = type(value)
    if kind in _PLAIN:
        return value
    if np is not None and isinstance(value, np.generic):  # np.float64 is a float too
        if not cbor:
            return _listed(np.asarray(value), where)
        return cbor2.CBORTag(_SCALAR, _array(np.asarray(value).reshape(1), where))
    if isinstance(value, _PLAIN):  # an enum.IntEnum, a str subclass: as their base type
        return value
    if kind is list:
        return [_out(v, where, cbor, depth + 1) for v in value]
    if kind is tuple:
        items = [_out(v, where, cbor, depth + 1) for v in value]
        return cbor2.CBORTag(_TUPLE, items) if cbor else items
    if kind is dict:
        return {_key(k, where, cbor): _out(v, where, cbor, depth + 1) for k, v in value.items()}
    if np is not None and isinstance(value, np.ndarray) and kind is np.ndarray:
        return _array(value, where) if cbor else _listed(value, where)
    raise _cannot(where, value)


def _key(key: Any, where: str, cbor: bool) -> Any:
    """A dict key: hashable as it goes (a tuple's tag holds a tuple)."""
    if type(key) is str or (cbor and type(key) in _PLAIN):
        return key
    if cbor and type(key) is tuple:
        return cbor2.CBORTag(_TUPLE, tuple(_key(k, where, cbor) for k in key))
    if not cbor:
        raise TypeError(f"{where} has a dict key of type {_name(key)}, which JSON cannot "
                        "carry (its keys are strings); call in CBOR")
    raise TypeError(f"{where} has a dict key of type {_name(key)}, which cannot cross the "
                    f"wire; keys are {_KEYS}")


def _array(value: Any, where: str) -> Any:
    """A numpy array as its tagged form (see the module's doc)."""
    dtype = value.dtype
    if dtype.kind == "b":
        flat: Any = cbor2.CBORTag(_BOOLS, value.reshape(-1).tolist())
    elif dtype.kind in "iuf" and dtype.itemsize in (1, 2, 4, 8) and not (
            dtype.kind == "f" and dtype.itemsize == 1):
        flat = _typed(value, dtype.kind, dtype.itemsize)
    elif dtype.kind == "c" and dtype.itemsize in (8, 16):
        parts = np.ascontiguousarray(value, dtype=dtype.newbyteorder("=")).reshape(-1)
        flat = cbor2.CBORTag(_COMPLEX, _typed(parts.view(f"=f{dtype.itemsize // 2}"), "f",
                                              dtype.itemsize // 2))
    else:
        raise _cannot(where, value, f" of dtype {dtype}")
    if value.ndim == 1:
        return flat
    return cbor2.CBORTag(_SHAPED, [list(value.shape), flat])


def _typed(value: Any, kind: str, size: int) -> TypedArray:
    contiguous = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("=")).reshape(-1)
    return TypedArray(Element(kind, size), byte_view(contiguous), contiguous)


def _listed(value: Any, where: str) -> Any:
    if value.dtype.kind not in "biuf":
        raise _cannot(where, value, f" of dtype {value.dtype} (JSON has no such numbers)")
    return value.tolist()


# --- In. --------------------------------------------------------------------

def from_wire(value: Any, where: str = "a value") -> Any:
    """A decoded body's value as it was sent: tuples, numpy arrays and
    scalars from their tags. ValueError for anything else a body can hold
    (another tag, a set, a date, a shared reference ...)."""
    return _In(where).value(value, 0)


def call_from_wire(arguments: list[Any], where: str) -> tuple[list[Any], dict[str, Any]]:
    """A call's decoded arguments: its positional ones and its keyword ones
    (a last argument tagged `keywords`)."""
    reader = _In(where)
    kwargs: dict[str, Any] = {}
    if arguments and cbor2 is not None and isinstance(arguments[-1], cbor2.CBORTag) and \
            arguments[-1].tag == _KEYWORDS:
        named = arguments.pop().value
        if type(named) is not dict or not all(type(k) is str and k.isidentifier() for k in named):
            raise ValueError(f"{where}: its keyword arguments are not a map of names to values")
        reader.seen.add(id(named))
        kwargs = {k: reader.value(v, 1) for k, v in named.items()}
    return [reader.value(a, 1) for a in arguments], kwargs


class _In:
    def __init__(self, where: str) -> None:
        self.where = where
        # Containers met so far: one met twice came through a shared reference.
        self.seen: set[int] = set()

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.where}: {what} is not a value a Launchpad call carries")

    def container(self, value: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError(f"{self.where}: a value nested more than {MAX_DEPTH} deep")
        self.once(value)

    def once(self, value: Any) -> None:
        # What is read more than once costs more than once: a body of
        # references to one large array would cost its size times theirs.
        if id(value) in self.seen:
            raise self.fail("a value that appears twice (a CBOR shared reference)")
        self.seen.add(id(value))

    def value(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is list:
            self.container(value, depth)
            return [self.value(v, depth + 1) for v in value]
        if kind is dict:
            self.container(value, depth)
            return {self.key(k, depth + 1): self.value(v, depth + 1) for k, v in value.items()}
        if np is not None and kind is np.ndarray and value.ndim == 1:
            self.once(value)
            return _writable(value)  # a typed array, as codec decoded it
        if cbor2 is not None and kind is cbor2.CBORTag:
            self.container(value, depth)
            return self.tagged(value, depth)
        if cbor2 is not None and value is cbor2.undefined:
            # Named here: its type's name differs between cbor2's versions.
            raise self.fail("CBOR's undefined")
        raise self.fail(f"a value of type {_name(value)}")

    def key(self, key: Any, depth: int) -> Any:
        kind = type(key)
        if kind in _PLAIN:
            return key
        if cbor2 is not None and kind is cbor2.CBORTag and key.tag == _TUPLE and \
                type(key.value) is tuple and depth <= MAX_DEPTH:
            if key.value:  # () is one object however often it comes
                self.once(key.value)
            return tuple(self.key(k, depth + 1) for k in key.value)
        raise self.fail(f"a dict key of type {_name(key)} (keys are {_KEYS})")

    def tagged(self, tag: Any, depth: int) -> Any:
        inner = tag.value
        if tag.tag == _TUPLE and type(inner) is list:
            return tuple(self.value(v, depth + 1) for v in inner)
        if tag.tag == _SCALAR:
            flat = self.flat(inner)
            if flat is None or flat.shape != (1,):
                raise self.fail("a numpy scalar that is not one element")
            return flat[0]
        if tag.tag == _SHAPED:
            if not (type(inner) is list and len(inner) == 2 and type(inner[0]) is list):
                raise self.fail("a shaped array that is not [shape, elements]")
            shape, flat = inner[0], self.flat(inner[1])
            if len(shape) > MAX_DIMENSIONS or not all(type(n) is int and 0 <= n < 2**63
                                                      for n in shape):
                raise self.fail(f"a shaped array of shape {shape!r}")
            if flat is None or math.prod(shape) != flat.size:
                raise self.fail(f"a shaped array of shape {shape} whose elements are not "
                                f"{math.prod(shape)} numbers of one type")
            try:
                return flat.reshape(shape)
            except ValueError as e:  # numpy's own limits
                raise self.fail(f"a shaped array of shape {shape} ({e})") from None
        flat = self.flat(tag)
        if flat is not None:
            return flat
        raise self.fail(f"a value tagged {tag.tag}")

    def flat(self, item: Any) -> Any:
        """The one-dimensional array `item` holds, or None."""
        if np is None:
            raise ValueError(f"{self.where}: a numpy array came, and numpy is not installed "
                             "(apt-get install python3-numpy)")
        if type(item) is np.ndarray and item.ndim == 1:
            self.once(item)
            return _writable(item)
        if type(item) is not cbor2.CBORTag:
            return None
        self.once(item.value)
        if item.tag == _BOOLS and type(item.value) is list and all(
                type(v) is bool for v in item.value):
            return np.array(item.value, dtype=bool)
        if item.tag == _COMPLEX and type(item.value) is np.ndarray and \
                item.value.dtype.kind == "f" and item.value.dtype.itemsize in (4, 8) and \
                item.value.size % 2 == 0:
            parts = np.ascontiguousarray(item.value, dtype=item.value.dtype.newbyteorder("="))
            return parts.view(f"=c{2 * item.value.dtype.itemsize}").copy()
        return None


def _writable(array: Any) -> Any:
    """A received array the receiver may change, as Courier gives it: a
    typed array decoded in place of the body's bytes is read-only."""
    return array if array.flags.writeable else array.copy()
