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
import weakref
from collections.abc import Sequence
from typing import Any

from .. import _protocol as protocol
from . import shared_memory, typed_arrays
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


class Body(list[Any]):
    """A CBOR body's pieces, in order; `arrays` lists where its large typed
    arrays are: (the index of the piece that is the array's bytes, the
    length of its byte string's head, which ends the piece before), for a
    connection that sends them through shared memory
    (shared_memory.Exchange.pack)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrays: list[tuple[int, int]] = []


def arrays_of(pieces: Sequence[Any]) -> Sequence[tuple[int, int]]:
    """Where the large typed arrays of a body's pieces are (Body.arrays);
    none in a JSON body."""
    return pieces.arrays if isinstance(pieces, Body) else ()


class _Pieces:
    """What cbor2's encoder writes to: small writes gather in a buffer; a
    large typed array's bytes are kept as a view between them."""

    def __init__(self) -> None:
        self.pieces = Body()
        self.buffer = bytearray()

    def write(self, data: Any) -> int:
        self.buffer += data
        return len(data)

    def add_view(self, view: memoryview, head_length: int) -> None:
        # The piece before it ends with its byte string's head.
        self.pieces.append(bytes(self.buffer))
        self.buffer = bytearray()
        self.pieces.arrays.append((len(self.pieces), head_length))
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
            string = _head(2, item.nbytes)
            out.write(_head(6, item.tag) + string)
            if item.nbytes >= LARGE_ARRAY:
                out.add_view(item.data, len(string))
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


class _SharedBytes:
    """Bytes of a segment the message brought (a reference in place of a
    byte string: shared_memory.py), until the typed array they are read."""

    __slots__ = ("arrival", "offset", "length")

    def __init__(self, arrival: shared_memory.Arrival, offset: int, length: int) -> None:
        self.arrival, self.offset, self.length = arrival, offset, length

    def copy(self) -> bytes:
        view = self.arrival.segment.view
        return bytes(view[self.offset:self.offset + self.length])


def _tag_hooks(segments: Sequence[shared_memory.Arrival] | None) -> Any:
    """cbor2's tag hook: typed arrays into Python values, and, with the
    segments a message brought, references to them into arrays read there."""

    def hook(decoder: Any, tag: Any) -> Any:
        if tag.tag == shared_memory.SHARED_BYTES_TAG:
            value = tag.value
            if not isinstance(value, list) or len(value) != 3:
                raise ValueError("a reference to shared memory is an array of 3 unsigned "
                                 "integers: [segment, offset, length]")
            return _SharedBytes(*shared_memory.reference(segments or (), *value))
        known = typed_arrays.element_of_tag(tag.tag)
        if isinstance(tag.value, _SharedBytes):
            shared = tag.value
            if known is None:
                return cbor2.CBORTag(tag.tag, shared.copy())
            element, little_endian = known
            if shared.length % element.size:
                raise ValueError(f"a typed array of {element.name()} holds {shared.length} "
                                 f"bytes, not a whole number of elements")
            if np is None:
                return typed_arrays.to_python(element, little_endian, shared.copy())
            # A view of the segment, read-only; the segment goes back to
            # its maker once no array read from it lives (Exchange).
            values = np.frombuffer(shared.arrival.segment.view,
                                   dtype=element.numpy_dtype(little_endian),
                                   count=shared.length // element.size, offset=shared.offset)
            values.flags.writeable = False  # as a received body's arrays are
            shared.arrival.arrays.append(weakref.ref(values))
            if element.size > 1 and little_endian != typed_arrays.LITTLE:
                values = values.astype(element.numpy_dtype(typed_arrays.LITTLE))
            return values
        if known is None or not isinstance(tag.value, bytes):
            return tag  # not a typed array: left as cbor2 gives it
        element, little_endian = known
        if len(tag.value) % element.size:
            raise ValueError(f"a typed array of {element.name()} holds {len(tag.value)} bytes, "
                             f"not a whole number of elements")
        return typed_arrays.to_python(element, little_endian, tag.value)

    return hook


_tag_hook = _tag_hooks(None)


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


def decode_cbor(body: Any, segments: Sequence[shared_memory.Arrival] | None = None) -> Any:
    # A large body of arguments keeps its typed arrays where they arrived.
    if np is not None and len(body) >= LARGE_ARRAY and isinstance(body, np.ndarray):
        found = _large_arguments(body)
        if found is not None:
            return [item.value for item in found]
    # A small body costs less through BytesIO's C reads than through a Python
    # read per item; a large one less through slices than through a copy.
    stream: _SliceReader | io.BytesIO = (_SliceReader(body) if len(body) >= LARGE_ARRAY
                                         else io.BytesIO(body))
    hook = _tag_hook if segments is None else _tag_hooks(segments)
    value = cbor2.CBORDecoder(stream, tag_hook=hook).decode()
    if stream.tell() != len(body):
        raise ValueError(f"{len(body) - stream.tell()} bytes follow the value")
    return value


def encode(value: Any, content_type: str) -> Pieces:
    """The body of `value` as a list of bytes-like pieces."""
    return encode_cbor(value) if content_type == CBOR else encode_json(value)


def decode(body: Any, content_type: str,
           segments: Sequence[shared_memory.Arrival] | None = None) -> Any:
    """The value a body holds. Raises ValueError (or a subclass, or
    RecursionError) for bytes that are not a value in that format.
    `segments`: the shared memory the message brought
    (shared_memory.Exchange.segments()), which its references read."""
    if content_type == CBOR:
        try:
            return decode_cbor(body, segments)
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
