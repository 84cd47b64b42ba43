"""Values with no schema: the arguments and results of a Launchpad
program's nodes, whose methods are untyped, as Courier's
(docs/coming_from_launchpad.md).

What the wire carries as it is goes as it is: None, bools, ints, floats,
strings, bytes, lists and dicts, nested. A one-dimensional numpy array of
integers or floats goes as an RFC 8746 typed array, and so comes back a
numpy array of its dtype; what has no form on the wire raises a TypeError
naming its type, before anything is sent.
"""

from __future__ import annotations

from typing import Any

from .._packages import numpy as np
from .typed_arrays import Element, TypedArray, byte_view

_PLAIN = (type(None), bool, int, float, str, bytes)


def to_wire(value: Any, where: str = "a value") -> Any:
    """`value` as codec.encode takes it; TypeError for a type the wire lacks."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (list, tuple)):
        return [to_wire(v, where) for v in value]
    if isinstance(value, dict):
        return {k: to_wire(v, where) for k, v in value.items()}
    if np is not None and isinstance(value, np.generic):
        return value.item()
    if np is not None and isinstance(value, np.ndarray):
        if value.ndim == 1 and value.dtype.kind in "iuf":
            contiguous = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))
            return TypedArray(Element(value.dtype.kind, value.dtype.itemsize),
                              byte_view(contiguous), contiguous)
        if value.dtype.kind in "iufb":
            return value.tolist()  # not yet a typed array: its shape goes as nested lists
    raise TypeError(f"{where} is a {type(value).__module__}.{type(value).__qualname__}, which "
                    "cannot cross the wire; a call takes None, bools, ints, floats, strings, "
                    "bytes, lists, tuples, dicts and numpy arrays of numbers, nested")
