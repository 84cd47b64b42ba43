"""A Python node's checkpoints: the C++ library's file format, so that the
launch reads what Python writes (include/launchpad/detail/checkpoint/checkpoints.hpp;
protocol.toml spells its words for both):

    lp-checkpoint 1\\n
    service <name>\\n
    bytes <n>\\n
    fnv1a64 <16 lowercase hex digits>\\n
    <n bytes of CBOR>

A class keeps checkpoints by defining both `state()`, which returns its
state, and `restore(value)`, which takes it back; the C++ interface struct
declares the state's type as a C++ service does (`State lp_save() const;`
and `void lp_restore(State);`), so the bytes are those a C++ lp_save of that
State would write, checked against that type on the way in and out.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import threading
from collections.abc import Callable, Collection
from typing import Any, ContextManager

from .. import _protocol as protocol
from .._packages import cbor2
from .._packages import numpy as np
from .._wire import codec, typed_arrays

HEADER = f"{protocol.CHECKPOINT_MAGIC}{protocol.CHECKPOINT_FORMAT}"
_PRIME = protocol.CHECKPOINT_FNV_PRIME
_OFFSET = protocol.CHECKPOINT_FNV_OFFSET
_MASK = (1 << 64) - 1
# RFC 8746's multi-dimensional array, row-major: [shape, typed array]. A
# numpy matrix keeps its shape through a save and a restore.
_ROW_MAJOR = protocol.ARRAY_TAG_ROW_MAJOR


class CheckpointError(Exception):
    """A checkpoint that cannot be restored: damaged, another service's, or
    unreadable. The message names the file and says what to do."""


def checksum(data: Any) -> int:
    """FNV-1a 64 over 8-byte little-endian words, then over the bytes left:
    checkpoint_checksum of the C++ library, bit for bit."""
    view = memoryview(data).cast("B")
    whole = len(view) - len(view) % 8
    value = _OFFSET
    for (word,) in struct.iter_unpack("<Q", view[:whole]):
        value = ((value ^ word) * _PRIME) & _MASK
    for byte in view[whole:]:
        value = ((value ^ byte) * _PRIME) & _MASK
    return value


def class_problems(cls: type, node: str, declared_state: dict[str, Any] | None = None,
                   method_names: Collection[object] = ()) -> list[str]:
    """How `cls` differs from the checkpoint C++ declares: `declared_state`
    is the schema of lp_save()'s State in the C++ interface (None: it
    declares none). A checkpointed class has state() and restore(value)."""
    has_state = callable(getattr(cls, "state", None))
    has_restore = callable(getattr(cls, "restore", None))
    name = cls.__name__
    if declared_state is not None and not (has_state and has_restore):
        missing = " and ".join(m for m, has in (("state()", has_state),
                                                 ("restore(value)", has_restore)) if not has)
        return [f"{node}: C++ declares a checkpoint (lp_save and lp_restore in the interface "
                f"struct), and the Python class {name} has no {missing}: define state(), which "
                "returns the state, and restore(value), which takes it back"]
    if declared_state is None and (has_state or has_restore) and "state" not in method_names \
            and "restore" not in method_names:
        return [f"{node}: the Python class {name} has "
                f"{'state() and restore(value)' if has_state and has_restore else 'state()' if has_state else 'restore(value)'}"
                ", a checkpoint C++ does not declare: add `State lp_save() const;` and "
                "`void lp_restore(State);` to the C++ interface struct (State: the type state() "
                "returns), or rename them if they are not the checkpoint"]
    return []


def keeps_checkpoints(cls: type) -> bool:
    return callable(getattr(cls, "state", None)) and callable(getattr(cls, "restore", None))


# --- The state as CBOR. -----------------------------------------------------

def encode(value: Any) -> bytes:
    """The CBOR bytes of a state; numpy arrays of numbers as typed arrays.
    Raises codec.EncodeError for a value CBOR cannot carry."""
    if cbor2 is None:
        raise codec.EncodeError("checkpoints are CBOR, and cbor2 is not installed "
                                "(apt-get install python3-cbor2)")
    # One contiguous copy: the checksum reads it, and the caller's arrays
    # may change once this returns.
    return b"".join(codec.encode_cbor(_typed(value)))


def decode(data: bytes) -> Any:
    """The state a checkpoint's CBOR holds; ValueError if it is not CBOR."""
    try:
        return _shaped(codec.decode_cbor(data))
    except (cbor2.CBORDecodeError, ValueError, TypeError, EOFError, RecursionError) as e:
        raise ValueError(str(e) or type(e).__name__) from None


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(v) for v in value]
    if np is not None and isinstance(value, np.ndarray):
        return _array(value)
    return value


def _array(array: Any) -> Any:
    element = _element(array.dtype)
    if element is None or array.ndim == 0:
        return array.tolist()  # bool, complex, strings: plain values
    flat = np.ascontiguousarray(array, dtype=element.numpy_dtype()).reshape(-1)
    typed = typed_arrays.TypedArray(element, typed_arrays.byte_view(flat), flat)
    return typed if array.ndim == 1 else cbor2.CBORTag(_ROW_MAJOR, [list(array.shape), typed])


def _element(dtype: Any) -> typed_arrays.Element | None:
    if dtype.kind not in "iuf" or dtype.itemsize not in (1, 2, 4, 8):
        return None
    if dtype.kind == "f" and dtype.itemsize == 1:
        return None
    return typed_arrays.Element(dtype.kind, dtype.itemsize)


def _shaped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shaped(v) for v in value]
    # A decoded typed array is a read-only view of the file's bytes; the
    # node's own arrays were writable, and its restore may keep them.
    if np is not None and isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, cbor2.CBORTag) and value.tag == _ROW_MAJOR:
        shape, flat = value.value
        if np is not None and isinstance(flat, np.ndarray):
            return flat.reshape(shape).copy()
        return _nested(list(flat), shape)
    return value


def _nested(flat: list[Any], shape: list[int]) -> list[Any]:
    """A flat list as nested lists of `shape` (a matrix without numpy)."""
    if len(shape) <= 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- The file. --------------------------------------------------------------

def _make_directories(path: str) -> None:
    """Every missing directory of `path`, each 0700 as the C++ library makes
    them (os.makedirs gives its mode to the last one only)."""
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise OSError(f"cannot create the checkpoint directory {directory}: a file of "
                              "that name is in the way") from None
        except OSError as e:
            raise OSError(f"cannot create the checkpoint directory {directory}: "
                          f"{e.strerror}") from None


def write(path: str, service: str, data: bytes) -> None:
    """Writes the checkpoint whole or not at all: a temporary file, synced,
    renamed over the last one, and the directory synced, so that a crash
    at any moment leaves the old checkpoint or the new one. Raises OSError
    naming the file."""
    directory = os.path.dirname(path) or "."
    _make_directories(directory)
    header = (f"{HEADER}\n{protocol.CHECKPOINT_SERVICE}{service}\n"
              f"{protocol.CHECKPOINT_BYTES}{len(data)}\n"
              f"{protocol.CHECKPOINT_CHECKSUM}{checksum(data):016x}\n").encode("utf-8")
    temporary = path + ".tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            with open(fd, "wb", closefd=False) as out:
                out.write(header)
                out.write(data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, path)
    except OSError as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise OSError(f"cannot write the checkpoint {path}: {e.strerror}") from None
    _sync_directory(directory)


def _sync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return  # the rename stands; only its durability at a crash is weaker
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read(path: str, service: str) -> bytes | None:
    """The state bytes saved at `path`, or None if there is no such file.
    Raises CheckpointError, naming the file, for one that is damaged,
    unreadable, or holds the state of another service than `service`."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CheckpointError(f"cannot read the checkpoint {path}: {e.strerror or e}") from None
    at = 0

    def damaged(why: str) -> CheckpointError:
        return CheckpointError(f"the checkpoint {path} is damaged ({why}); remove it to start "
                               "that node afresh, or resume from another")

    def line(key: str) -> str:
        nonlocal at
        end = text.find(b"\n", at)
        if end < 0 or not text.startswith(key.encode(), at):
            raise damaged(f"no line '{key}...' where expected")
        value = text[at + len(key):end].decode("utf-8", "replace")
        at = end + 1
        return value

    version = line(protocol.CHECKPOINT_MAGIC)
    if version != str(protocol.CHECKPOINT_FORMAT):
        raise damaged(f"it is of format {version!r}; this reader knows format "
                      f"{protocol.CHECKPOINT_FORMAT}")
    saved_service = line(protocol.CHECKPOINT_SERVICE)
    size = line(protocol.CHECKPOINT_BYTES)
    saved_sum = line(protocol.CHECKPOINT_CHECKSUM)
    if saved_service != service:
        raise CheckpointError(f"the checkpoint {path} holds the state of a {saved_service}, not "
                              f"of a {service}; is it another program's, or was the node's "
                              "service changed?")
    state = memoryview(text)[at:]
    if size != str(len(state)):
        raise damaged(f"it has {len(state)} bytes of state, its header says {size}")
    if saved_sum != f"{checksum(state):016x}":
        raise damaged("its checksum does not match its bytes")
    return bytes(state)


def damaged_state(path: str, why: Exception) -> CheckpointError:
    """The error of a checkpoint whose header is sound but whose state does
    not decode."""
    return CheckpointError(f"the checkpoint {path} is damaged (its state is not CBOR: {why}); "
                           "remove it to start that node afresh, or resume from another")



# --- Saving while the node serves. ---------------------------------------------

class Saver:
    """Saves a node's state (`target.state()`) to its checkpoint: every
    `interval` seconds on a thread of its own, and when asked (at stop).
    A save that fails says why on stderr, and the node goes on."""

    def __init__(self, target: Any, path: str, service: str, label: str,
                 turn: threading.Lock | None = None,
                 to_bytes: Callable[[Any], bytes] | None = None) -> None:
        self._target, self._path, self._service, self._label = target, path, service, label
        self._to_bytes = to_bytes or encode
        # The node's call lock: state() runs between calls, as lp_save does.
        self._turn: ContextManager[Any] = contextlib.nullcontext()
        if turn is not None:
            self._turn = turn
        self._one_at_a_time = threading.Lock()  # every save writes the same temporary file
        self._stopped = threading.Event()

    def start(self, interval: float) -> Saver:
        if interval > 0:
            threading.Thread(target=self._every, args=(interval,), name=f"lp-{self._label}-checkpoint",
                             daemon=True).start()
        return self

    def _every(self, interval: float) -> None:
        while not self._stopped.wait(interval):
            self.save()

    def stop(self) -> None:
        """No periodic save begins from now on (one under way ends first)."""
        self._stopped.set()

    def save(self) -> bool:
        """Saves now; False, after saying why, if it could not."""
        with self._one_at_a_time:
            try:
                write(self._path, self._service, self._snapshot())
                return True
            except (OSError, _NoState) as e:
                print(f"[lp] {self._label}: no checkpoint saved: {e}", file=sys.stderr, flush=True)
                return False

    def _snapshot(self) -> bytes:
        # Encoded while calls wait: the bytes are a copy, so a call that
        # changes the state afterwards cannot tear the checkpoint.
        with self._turn:
            try:
                value = self._target.state()
            except Exception as e:
                raise _NoState(f"state() raised {type(e).__name__}: {e}") from None
            try:
                return self._to_bytes(value)
            except (codec.EncodeError, TypeError, ValueError) as e:
                raise _NoState(f"state() returned what a checkpoint cannot hold ({e}); return "
                               "numbers, strings, lists, dicts and numpy arrays") from None


class _NoState(Exception):
    """state() failed, or returned what CBOR cannot carry."""
