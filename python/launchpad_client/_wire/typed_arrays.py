"""RFC 8746 typed arrays: vectors of numbers as one tagged byte string.

A C++ `std::vector<float>` (or of any other number type but bool) travels in
CBOR as a tag naming the element type and byte order, then the raw bytes
(docs/protocol.md#numbers-in-bulk-typed-arrays-and-tensors). Here an element
type is an `Element`; an outgoing array is a `TypedArray`, which the CBOR
encoder writes as its tag and bytes and the JSON encoder as a list of
numbers; an incoming one becomes a numpy array (a view of the received bytes
when their byte order is this machine's) or, without numpy, a list.
"""

from __future__ import annotations

import array
import struct
import sys
from typing import Any

from .. import _protocol as protocol
from .._packages import numpy as np

LITTLE = sys.byteorder == "little"


class Element:
    """A number type of typed arrays: kind 'i' (signed), 'u' (unsigned) or
    'f' (floating point), and its size in bytes."""

    __slots__ = ("kind", "size")

    def __init__(self, kind: str, size: int) -> None:
        self.kind = kind
        self.size = size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Element) and (self.kind, self.size) == (other.kind, other.size)

    def __hash__(self) -> int:
        return hash((self.kind, self.size))

    def __repr__(self) -> str:
        return self.name()

    def name(self) -> str:
        """numpy's name of the type: 'float32', 'int8', 'uint64' ..."""
        return {"i": "int", "u": "uint", "f": "float"}[self.kind] + str(8 * self.size)

    def tag(self, little_endian: bool = LITTLE) -> int:
        """The RFC 8746 tag of an array of these in the given byte order."""
        if self.size == 1:  # one byte has no byte order
            return protocol.ARRAY_TAG_INT8 if self.kind == "i" else protocol.ARRAY_TAG_UINT8
        ll = {2: 1, 4: 2, 8: 3}[self.size]
        order = protocol.ARRAY_TAG_LITTLE_ENDIAN_BIT if little_endian else 0
        if self.kind == "f":  # float16 0, float32 1, float64 2
            return protocol.ARRAY_TAG_FIRST | protocol.ARRAY_TAG_FLOAT_BIT | order | (ll - 1)
        signed = protocol.ARRAY_TAG_SIGNED_BIT if self.kind == "i" else 0
        return protocol.ARRAY_TAG_FIRST | signed | order | ll

    def numpy_dtype(self, little_endian: bool = LITTLE) -> Any:
        order = "|" if self.size == 1 else ("<" if little_endian else ">")
        return np.dtype(f"{order}{self.kind}{self.size}")

    def array_typecode(self) -> str | None:
        """The `array` module's code for this type on this machine, or None
        (float16 has none)."""
        if self.kind == "f":
            return {4: "f", 8: "d"}.get(self.size)
        for code in ("bhilq" if self.kind == "i" else "BHILQ"):
            if array.array(code).itemsize == self.size:
                return code
        return None


def element_of_tag(tag: int) -> tuple[Element, bool] | None:
    """The element type and byte order (little endian?) of a typed-array tag,
    or None for a tag that is not one this protocol carries."""
    if not protocol.ARRAY_TAG_FIRST <= tag <= protocol.ARRAY_TAG_LAST:
        return None
    little = bool(tag & protocol.ARRAY_TAG_LITTLE_ENDIAN_BIT)
    ll = tag & protocol.ARRAY_TAG_SIZE_BITS
    if tag & protocol.ARRAY_TAG_FLOAT_BIT:
        if ll == 3:  # float128: no type to hold it
            return None
        return Element("f", 2 << ll), little
    if tag == protocol.ARRAY_TAG_RESERVED:
        return None
    return Element("i" if tag & protocol.ARRAY_TAG_SIGNED_BIT else "u", 1 << ll), little


class TypedArray:
    """An outgoing typed array: the bytes to send (a memoryview of the
    caller's array when its layout allows, so nothing is copied) and the
    element type they hold, in this machine's byte order."""

    __slots__ = ("element", "data", "source")

    def __init__(self, element: Element, data: memoryview, source: Any) -> None:
        self.element = element
        self.data = data  # a contiguous memoryview of unsigned bytes
        self.source = source  # what `tolist` reads for JSON

    @property
    def tag(self) -> int:
        return self.element.tag()

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def tolist(self) -> list[Any]:
        if hasattr(self.source, "tolist"):
            values: list[Any] = self.source.tolist()
            return values
        return list(self.source)


def byte_view(buffer: Any) -> memoryview:
    """A contiguous object's memory as unsigned bytes, without a copy."""
    view = memoryview(buffer)
    if view.nbytes == 0:
        return memoryview(b"")  # a view with a 0 in its shape cannot be cast
    return view.cast("B")


def from_buffer_object(value: Any, element: Element) -> TypedArray | None:
    """A TypedArray of `value`'s bytes if it is an array.array of exactly
    this element type, or bytes-like for a one-byte one; else None."""
    if isinstance(value, array.array):
        if value.typecode != element.array_typecode():
            return None
        return TypedArray(element, byte_view(value), value)
    if element.size == 1 and isinstance(value, (bytes, bytearray, memoryview)):
        view = memoryview(value)
        if not view.contiguous:
            return None
        view = byte_view(view)
        signed = element.kind == "i"
        return TypedArray(element, view, view.cast("b") if signed and view.nbytes else view)
    return None


def to_python(element: Element, little_endian: bool, data: bytes) -> Any:
    """The numbers of an incoming typed array: a numpy array (sharing `data`,
    read-only, when the byte order is this machine's) or, without numpy, a
    list. `data` must hold a whole number of elements."""
    if np is not None:
        values = np.frombuffer(data, dtype=element.numpy_dtype(little_endian))
        if element.size > 1 and little_endian != LITTLE:
            values = values.astype(element.numpy_dtype(LITTLE))  # the other byte order: a copy
        return values
    code = element.array_typecode()
    if code is None:  # float16 without numpy
        order = "<" if little_endian else ">"
        return list(struct.unpack(f"{order}{len(data) // 2}e", data))
    values = array.array(code, data)
    if element.size > 1 and little_endian != LITTLE:
        values.byteswap()
    return values.tolist()
