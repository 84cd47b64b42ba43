"""Bodies in JSON or CBOR (docs/protocol.md#formats).

`encode` gives a request body as pieces to send in order: in CBOR a large
typed array is a piece of its own, a view of the caller's array, so that a
4 MB argument is written to the socket without being copied first (as the C++
client sends "from the argument itself"). `decode` turns a reply body into
Python values, typed arrays into numpy arrays (typed_arrays.py).
"""

from __future__ import annotations

import io
import json
from typing import Any

from .. import _protocol as protocol
from . import typed_arrays
from .._packages import cbor2
from .._packages import numpy as np
from .typed_arrays import TypedArray

JSON = protocol.MEDIA_JSON
CBOR = protocol.MEDIA_CBOR
# A body's pieces, to send in order: bytes, and views of large arrays.
Pieces = list[Any]

# A typed array at least this large goes out as a view of the caller's
# memory; smaller ones are copied into the body around them, as one write of
# a few bytes more costs less than a piece of its own.
LARGE_ARRAY = 64 * 1024


class EncodeError(ValueError):
    """A value that cannot travel in the chosen format."""


# --- JSON. ----------------------------------------------------------------

def _json_default(value: Any) -> Any:
    if isinstance(value, TypedArray):
        return value.tolist()
    if np is not None and isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"a {type(value).__name__} has no JSON form")


def encode_json(value: Any) -> Pieces:
    try:
        text = json.dumps(value, default=_json_default, allow_nan=False, ensure_ascii=False,
                          separators=(",", ":"))
    except ValueError as e:
        if "JSON compliant" in str(e):  # NaN or an infinity
            raise EncodeError(
                "NaN and infinities cannot travel in JSON; CBOR carries them "
                "(install cbor2: apt-get install python3-cbor2)"
            ) from None
        raise EncodeError(str(e)) from None
    except (TypeError, RecursionError) as e:
        raise EncodeError(str(e)) from None
    try:
        return [text.encode("utf-8")]
    except UnicodeEncodeError as e:
        raise EncodeError(f"a string is not valid Unicode: {e}") from None


def decode_json(body: Any) -> Any:
    if not isinstance(body, (bytes, bytearray, str)):
        body = bytes(body)  # a large body received into a numpy buffer
    return json.loads(body)


# --- CBOR. ----------------------------------------------------------------

def _head(major: int, length: int) -> bytes:
    """The head of a CBOR data item: its major type and length argument."""
    major <<= 5
    if length < 24:
        return bytes((major | length,))
    if length < 1 << 8:
        return bytes((major | 24, length))
    if length < 1 << 16:
        return bytes((major | 25,)) + length.to_bytes(2, "big")
    if length < 1 << 32:
        return bytes((major | 26,)) + length.to_bytes(4, "big")
    return bytes((major | 27,)) + length.to_bytes(8, "big")


class _Pieces:
    """What cbor2's encoder writes to: small writes gather in a buffer; a
    large typed array's bytes are kept as a view between them."""

    def __init__(self) -> None:
        self.pieces: Pieces = []
        self.buffer = bytearray()

    def write(self, data: Any) -> int:
        self.buffer += data
        return len(data)

    def add_view(self, view: memoryview) -> None:
        if self.buffer:
            self.pieces.append(bytes(self.buffer))
            self.buffer = bytearray()
        self.pieces.append(view)

    def finish(self) -> Pieces:
        if self.buffer or not self.pieces:
            self.pieces.append(bytes(self.buffer))
        return self.pieces


def encode_cbor(value: Any) -> Pieces:
    out = _Pieces()

    def default(encoder: Any, item: Any) -> None:
        if isinstance(item, TypedArray):
            # RFC 8746: tag (major type 6), then one byte string (major type 2).
            out.write(_head(6, item.tag) + _head(2, item.nbytes))
            if item.nbytes >= LARGE_ARRAY:
                out.add_view(item.data)
            else:
                out.write(item.data)
        elif np is not None and isinstance(item, (np.ndarray, np.generic)):
            encoder.encode(item.tolist())
        else:
            raise TypeError(f"a {type(item).__name__} has no CBOR form")

    try:
        cbor2.CBOREncoder(out, default=default).encode(value)
    except UnicodeEncodeError as e:
        raise EncodeError(f"a string is not valid Unicode: {e}") from None
    except (TypeError, ValueError, RecursionError, cbor2.CBOREncodeError) as e:
        raise EncodeError(str(e)) from None
    return out.finish()


def _tag_hook(decoder: Any, tag: Any) -> Any:
    known = typed_arrays.element_of_tag(tag.tag)
    if known is None or not isinstance(tag.value, bytes):
        return tag  # not a typed array: left as cbor2 gives it
    element, little_endian = known
    if len(tag.value) % element.size:
        raise ValueError(f"a typed array of {element.name()} holds {len(tag.value)} bytes, "
                         f"not a whole number of elements")
    return typed_arrays.to_python(element, little_endian, tag.value)


class _SliceReader:
    """A file over a received body that cbor2 reads without the whole body
    being copied first (io.BytesIO copies a bytearray): each read is a copy
    of just the bytes asked for, and a typed array's bytes are read once."""

    def __init__(self, body: Any) -> None:
        self.view = memoryview(body)
        self.at = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.view) if size < 0 else min(self.at + size, len(self.view))
        data = bytes(self.view[self.at:end])
        self.at = end
        return data

    def tell(self) -> int:
        return self.at


def _argument(major: int, info: int, view: memoryview, at: int) -> tuple[int, int] | None:
    """The length argument of the CBOR head at `at` and where its content
    starts; None for an indefinite length or a reserved value."""
    if info < 24:
        return info, at + 1
    if info > 27:
        return None
    size = 1 << (info - 24)
    if at + 1 + size > len(view):
        return None
    return int.from_bytes(view[at + 1:at + 1 + size], "big"), at + 1 + size


def _item_end(view: memoryview, at: int, depth: int = 0) -> int | None:
    """Where the CBOR item at `at` ends; None where the fast path gives up
    (indefinite lengths, deep nesting, a truncated body: the general decoder
    then says what is wrong)."""
    if at >= len(view) or depth > 16:
        return None
    major, info = view[at] >> 5, view[at] & 0x1F
    head = _argument(major, info, view, at)
    if head is None:
        return None
    value, at = head
    if major in (0, 1, 7):
        return at
    if major in (2, 3):
        return at + value if at + value <= len(view) else None
    if major == 6:
        return _item_end(view, at, depth + 1)
    for _ in range(value * (2 if major == 5 else 1)):
        item_end = _item_end(view, at, depth + 1)
        if item_end is None:
            return None
        at = item_end
    return at


def _large_arguments(body: Any) -> list[_Decoded] | None:
    """A large body that is an array of arguments, each typed array in it a
    numpy view of the received bytes (no copy); the other arguments decoded
    from their own bytes. None where the body has another shape."""
    view = memoryview(body).cast("B")
    if not view or view[0] >> 5 != 4:
        return None
    head = _argument(4, view[0] & 0x1F, view, 0)
    if head is None or head[0] > 64:
        return None
    count, at = head
    out = []
    for _ in range(count):
        end = _item_end(view, at)
        if end is None:
            return None
        out.append(_typed_view(body, view, at, end) or _decoded(view[at:end]))
        at = end
    return out if at == len(view) else None


def _typed_view(body: Any, view: memoryview, at: int, end: int) -> _Decoded | None:
    """A typed array's numbers as a numpy view of `body`; None for another item."""
    if view[at] >> 5 != 6:
        return None
    tagged = _argument(6, view[at] & 0x1F, view, at)
    if tagged is None:
        return None
    tag, inner = tagged
    known = typed_arrays.element_of_tag(tag)
    if known is None or view[inner] >> 5 != 2:
        return None
    string = _argument(2, view[inner] & 0x1F, view, inner)
    if string is None:
        return None
    length, start = string
    element, little_endian = known
    if start + length != end or length % element.size:
        return None
    values = np.frombuffer(body, dtype=element.numpy_dtype(little_endian),
                           count=length // element.size, offset=start)
    if element.size > 1 and little_endian != typed_arrays.LITTLE:
        values = values.astype(element.numpy_dtype(typed_arrays.LITTLE))
    return _Decoded(values)


class _Decoded:
    """An argument decoded (wrapped, as a decoded None is an argument too)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _decoded(item: memoryview) -> _Decoded:
    return _Decoded(decode_cbor(bytes(item)))


def decode_cbor(body: Any) -> Any:
    # A large body of arguments keeps its typed arrays where they arrived.
    if np is not None and len(body) >= LARGE_ARRAY and isinstance(body, np.ndarray):
        found = _large_arguments(body)
        if found is not None:
            return [item.value for item in found]
    # A small body costs less through BytesIO's C reads than through a Python
    # read per item; a large one less through slices than through a copy.
    stream: _SliceReader | io.BytesIO = (_SliceReader(body) if len(body) >= LARGE_ARRAY
                                         else io.BytesIO(body))
    value = cbor2.CBORDecoder(stream, tag_hook=_tag_hook).decode()
    if stream.tell() != len(body):
        raise ValueError(f"{len(body) - stream.tell()} bytes follow the value")
    return value


def encode(value: Any, content_type: str) -> Pieces:
    """The body of `value` as a list of bytes-like pieces."""
    return encode_cbor(value) if content_type == CBOR else encode_json(value)


def decode(body: Any, content_type: str) -> Any:
    """The value a body holds. Raises ValueError (or a subclass, or
    RecursionError) for bytes that are not a value in that format."""
    if content_type == CBOR:
        try:
            return decode_cbor(body)
        except cbor2.CBORDecodeError as e:
            raise ValueError(str(e)) from None
        except TypeError as e:  # a map key that is no key: an array decoded from a typed one
            raise ValueError(f"a map's key cannot be a key: {e}") from None
        except (ValueError, RecursionError):
            raise
        except Exception as e:  # cbor2's own decoders of tags (a date out of range ...)
            raise ValueError(f"{type(e).__name__}: {e}") from None
    try:
        return decode_json(body)
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8: {e}") from None
