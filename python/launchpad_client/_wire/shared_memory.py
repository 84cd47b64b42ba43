"""Bulk data between two processes of one host, through shared memory.

The Python side of docs/protocol.md#bulk-data-through-shared-memory, as the
C++ nodes and clients do it (include/launchpad/detail/wire/shared_memory.hpp,
whose comment says why it is built so): over a unix socket, a message's
typed arrays of 64 KiB or more go in a segment (a memfd sealed against
changes of size) whose descriptor goes with the message, and the body
refers to them (a CBOR tag on [segment, offset, length]). A process lends
the segments it made (`Pool`, up to a cap of bytes) and gets back those its
peer no longer reads (Lp-Returned); one the peer keeps is given away.
The receiver maps a segment once per connection and reads it: numpy
arrays are views of it, read-only, without a copy.

`Exchange` is one connection's part, at either end: what came with the
peer's last message, what this end lent with its own, and the head lines of
the next.
"""

from __future__ import annotations

import array
import fcntl
import mmap
import os
import socket
import stat
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from .. import _protocol as protocol

SHARED_BYTES_TAG = protocol.SAME_HOST_REFERENCE_TAG
MAX_DESCRIPTORS = protocol.SAME_HOST_MAX_DESCRIPTORS  # in one message
BULK_FROM = 64 * 1024  # a typed array at least this large goes in a segment
IDLE_LIMIT = 30.0  # seconds a free segment is kept
DEFAULT_CAP = 256 << 20
MAX_CACHED = 16  # a peer's segments kept mapped per connection
_INT = array.array("i").itemsize
# The head fields, as a reader's lower-case names.
_BULK = protocol.HEADER_BULK.lower()
_SEGMENTS = protocol.HEADER_SEGMENTS.lower()
_RETURNED = protocol.HEADER_RETURNED.lower()

Identity = tuple[int, int]  # (device, inode) of a segment's memfd


class SegmentError(ValueError):
    """The segments a message brought are not what they should be."""


class Segment:
    """One memfd, mapped in this process. A segment of this process's keeps
    its descriptor, to send; a peer's keeps none: its mapping alone holds
    the memory (and mmap's own duplicate of the descriptor, which goes with
    the mapping), so that it lasts exactly as long as this process reads it."""

    __slots__ = ("fd", "size", "mapping", "view", "identity", "writable", "__weakref__")

    def __init__(self, fd: int | None, size: int, mapped: mmap.mmap, identity: Identity,
                 writable: bool) -> None:
        self.fd = fd
        self.size = size
        self.mapping = mapped
        self.view = memoryview(mapped)
        self.identity = identity
        self.writable = writable

    @classmethod
    def create(cls, size: int) -> Segment | None:
        """A new segment of this process's, sealed against any change of
        size; None where the system will not make one."""
        try:
            fd = os.memfd_create("launchpad", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        except (OSError, AttributeError):
            return None
        try:
            os.ftruncate(fd, size)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                        fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            about = os.fstat(fd)
            return cls(fd, size, mmap.mmap(fd, size), (about.st_dev, about.st_ino), True)
        except OSError:
            os.close(fd)
            return None

    @classmethod
    def adopt(cls, fd: int, largest: int) -> Segment:
        """A peer's segment that came as descriptor `fd` (taken: closed on
        failure too), mapped for reading. Raises SegmentError for one that
        is not a memfd sealed against shrinking, empty or too large. The
        descriptor is closed once mapped: the mapping holds the memory."""
        try:
            about = os.fstat(fd)
            if not stat.S_ISREG(about.st_mode):
                raise SegmentError("a descriptor that came with the message is not a memfd")
            try:
                seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
            except OSError:
                raise SegmentError("a descriptor that came with the message is not a memfd") from None
            if not seals & fcntl.F_SEAL_SHRINK:
                raise SegmentError("a segment that came with the message is not sealed against "
                                   "shrinking (F_SEAL_SHRINK): it could be cut short under the reader")
            size = about.st_size
            if size == 0:
                raise SegmentError("a segment of 0 bytes came with the message; an empty one "
                                   "holds nothing")
            if size > largest:
                raise SegmentError(f"a segment of {size} bytes came with the message; this end "
                                   f"takes at most {largest}")
            try:
                mapped = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
            except OSError as e:
                raise SegmentError(f"a segment that came with the message cannot be mapped: "
                                   f"{e.strerror}") from None
            return cls(None, size, mapped, (about.st_dev, about.st_ino), False)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Lets go of it; an array still reading it keeps the mapping (it is
        unmapped, and mmap's descriptor closed, when the last one goes)."""
        self.view.release()
        try:
            self.mapping.close()
        except BufferError:
            pass
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _Entry:
    """A segment of the pool's, whether it is lent, and when it last was."""

    __slots__ = ("segment", "lent", "used")

    def __init__(self, segment: Segment, lent: bool, used: float) -> None:
        self.segment, self.lent, self.used = segment, lent, used


class Pool:
    """The segments this process made: free, lent or in use, within a cap
    of bytes. One per process (`pool()`), shared by clients and servers."""

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Identity, _Entry] = {}
        self.cap = cap
        self.bytes = 0
        self.lent_messages = 0
        self.fallbacks = 0
        self.given_away = 0

    def set_cap(self, cap: int) -> None:
        """The most bytes its segments hold at once (a node's: its host's
        --lp_shared_memory_mb); 0: none, every array goes through the socket
        and this process reads no peer's segments either. Free segments past
        a lower cap go now."""
        with self._lock:
            self.cap = max(0, cap)
            for identity, entry in list(self._entries.items()):
                if self.bytes <= self.cap:
                    break
                if not entry.lent:
                    self._drop(identity)

    def figures(self) -> dict[str, int]:
        """As a C++ node's "shared_memory" figures: bytes held, messages
        whose arrays went through it, fallbacks to the socket at the cap,
        segments a peer kept."""
        with self._lock:
            return {"bytes": self.bytes, "messages": self.lent_messages,
                    "fallbacks": self.fallbacks, "kept": self.given_away}

    @staticmethod
    def size_class(size: int) -> int:
        """At least `size` bytes: steps of a quarter of the power of two
        below it, whole pages (as the C++ pool's)."""
        page = step = 4096
        while step * 8 <= size:
            step *= 2
        return max(page, (size + step - 1) // step * step)

    def take(self, size: int) -> Segment | None:
        """A segment of at least `size` bytes to fill and lend, or None past
        the cap (counted as a fallback)."""
        wanted = self.size_class(size)
        now = time.monotonic()
        with self._lock:
            best: _Entry | None = None
            for entry in self._entries.values():
                if not entry.lent and size <= entry.segment.size <= 2 * wanted and (
                        best is None or entry.segment.size < best.segment.size):
                    best = entry
            if best is not None:
                best.lent, best.used = True, now
                return best.segment
            for any_free in (False, True):
                if self.bytes + wanted <= self.cap:
                    break
                for identity, entry in list(self._entries.items()):
                    if self.bytes + wanted <= self.cap:
                        break
                    if not entry.lent and (any_free or now - entry.used > IDLE_LIMIT):
                        self._drop(identity)
            if self.bytes + wanted > self.cap:
                self.fallbacks += 1
                return None
            segment = Segment.create(wanted)
            if segment is None:
                self.fallbacks += 1
                return None
            self.bytes += wanted
            self._entries[segment.identity] = _Entry(segment, True, now)
            for identity, entry in list(self._entries.items()):
                if not entry.lent and now - entry.used > IDLE_LIMIT:
                    self._drop(identity)
            return segment

    def own(self, identity: Identity) -> Segment | None:
        with self._lock:
            entry = self._entries.get(identity)
            return entry.segment if entry else None

    def lent(self) -> None:
        with self._lock:
            self.lent_messages += 1

    def give_back(self, segment: Segment) -> None:
        with self._lock:
            entry = self._entries.get(segment.identity)
            if entry is not None and entry.segment is segment:
                entry.lent, entry.used = False, time.monotonic()

    def give_away(self, segment: Segment) -> None:
        """A lent segment its peer keeps: forgotten here; its memory goes
        with the peer's last use."""
        with self._lock:
            entry = self._entries.get(segment.identity)
            if entry is not None and entry.segment is segment:
                self._drop(segment.identity)
                self.given_away += 1

    def _drop(self, identity: Identity) -> None:
        segment = self._entries.pop(identity).segment
        self.bytes -= segment.size
        segment.close()


_pool: Pool | None = None
_pool_lock = threading.Lock()


def pool() -> Pool:
    """This process's pool (the cap: its `cap`, 256 MiB unless set)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = Pool()
        return _pool


class Arrival:
    """A segment that came with the peer's last message, and the arrays read
    from it in place (weak references: an array alive, or one derived from
    it, keeps the segment from going back)."""

    __slots__ = ("segment", "home", "arrays")

    def __init__(self, segment: Segment, home: bool) -> None:
        self.segment = segment
        self.home = home  # this end's own, lent and sent back
        self.arrays: list[weakref.ref[Any]] = []

    def in_use(self) -> bool:
        return any(ref() is not None for ref in self.arrays)


class Exchange:
    """One connection's segments, at either end. Used by one thread at a
    time, as its connection is."""

    def __init__(self) -> None:
        self.peer_takes = False
        self._lent: list[Segment] = []  # with this end's last message
        self._pending: Segment | None = None  # packed, for the message being sent
        self._received: list[Arrival] = []  # of the peer's last message
        self._cache: dict[Identity, Segment] = {}  # the peer's segments, mapped
        self._closed = False

    def close(self) -> None:
        """The connection ends: what this end lent is given away, what it
        held of the peer's is let go (the arrays read from it keep it)."""
        if self._closed:
            return
        self._closed = True
        for segment in self._lent:
            pool().give_away(segment)
        if self._pending is not None:
            pool().give_away(self._pending)
        self._lent, self._pending, self._received = [], None, []
        for segment in self._cache.values():
            segment.close()
        self._cache.clear()

    # --- A message that came. -------------------------------------------

    def received(self, headers: Mapping[str, str], fds: list[int], largest: int) -> None:
        """Takes a message's head fields (`headers`, lower-case names) and the
        descriptors that came with it (owned from now on): maps them, and
        takes the peer's word on what this end lent. Raises SegmentError,
        every descriptor closed, if they are not what the head says."""
        self.peer_takes = headers.get(_BULK) == protocol.SAME_HOST_BULK_VALUE
        came: list[Arrival] = []
        error = None
        try:
            announced = _count(headers.get(_SEGMENTS, ""))
            if announced != len(fds):
                raise SegmentError(f"the message announced {announced} segments "
                                   f"({protocol.HEADER_SEGMENTS}) and brought {len(fds)} "
                                   "descriptors")
            while fds:
                fd = fds.pop(0)
                identity: Identity | None
                try:
                    about = os.fstat(fd)
                    identity = (about.st_dev, about.st_ino)
                except OSError:
                    identity = None
                home = self._lent_with(identity)
                segment = home
                if segment is None and identity is not None:
                    segment = pool().own(identity) or self._cache.get(identity)
                if segment is not None:
                    os.close(fd)
                else:
                    segment = Segment.adopt(fd, largest)
                    if len(self._cache) < MAX_CACHED:
                        self._cache[segment.identity] = segment
                came.append(Arrival(segment, home is not None))
        except SegmentError as e:
            error = e
        for fd in fds:
            os.close(fd)
        fds.clear()
        self._settle(headers.get(_RETURNED, ""), came)
        self._received = []
        if error is not None:
            raise error
        self._received = came

    def segments(self) -> list[Arrival]:
        """What the body's references read: each segment the last message
        brought, with the arrays read from it."""
        return self._received

    # --- The next message from this end. ---------------------------------

    def head_lines(self) -> str:
        """The head lines of this end's next message: that it reads
        segments, the segment pack() made, and which of the peer's last
        segments it is done with (none of the arrays read from them in place
        lives on; the others it keeps). After pack()."""
        # With no shared memory of its own (a cap of 0) this end takes none
        # of the peer's either: every array goes through the socket.
        lines = []
        if pool().cap > 0:
            lines.append(f"{protocol.HEADER_BULK}: {protocol.SAME_HOST_BULK_VALUE}\r\n")
        if self._pending is not None:
            lines.append(f"{protocol.HEADER_SEGMENTS}: 1\r\n")
        if self._received:
            done = []
            for i, arrival in enumerate(self._received):
                if arrival.home:
                    continue
                if not arrival.in_use():
                    done.append(str(i))
                elif self._cache.get(arrival.segment.identity) is arrival.segment:
                    del self._cache[arrival.segment.identity]  # kept here: never lent again
            lines.append(f"{protocol.HEADER_RETURNED}: {','.join(done)}\r\n")
            self._received = []
        return "".join(lines)

    def reserve(self, size: int) -> Segment | None:
        """A segment of this process's of at least `size` bytes for the
        message about to be sent, or None (the peer reads no segments, or
        the pool is at its cap)."""
        if not self.peer_takes or self._pending is not None or pool().cap == 0:
            return None
        self._pending = pool().take(size)
        return self._pending

    def descriptor(self) -> int | None:
        """The descriptor of the segment that goes with the next message."""
        return None if self._pending is None else self._pending.fd

    def done(self, sent: bool) -> None:
        """The message went (its segment lent until the peer's next message
        says), or did not (the segment may be half sent: given away)."""
        if self._pending is None:
            return
        if sent:
            self._lent.append(self._pending)
            pool().lent()
        else:
            pool().give_away(self._pending)
        self._pending = None

    def _lent_with(self, identity: Identity | None) -> Segment | None:
        for segment in self._lent:
            if segment.identity == identity:
                return segment
        return None

    def _settle(self, returned: str, came: list[Arrival]) -> None:
        back = set()
        for part in returned.split(","):
            part = part.strip()
            if part.isdigit() and int(part) < len(self._lent):
                back.add(int(part))
        for arrival in came:
            if arrival.home:
                for j, segment in enumerate(self._lent):
                    if segment is arrival.segment:
                        back.add(j)
        for j, segment in enumerate(self._lent):
            (pool().give_back if j in back else pool().give_away)(segment)
        self._lent = []

    def pack(self, pieces: Sequence[Any], arrays: Sequence[tuple[int, int]]) -> list[Any]:
        """The body `pieces` with its large typed arrays (`arrays`: the index
        of each one's piece, and the length of its byte string's head, which
        ends the piece before) moved into a segment of this process's,
        references in their place, where the peer reads segments and the
        pool has room; else `pieces` as they are. The segment goes with the
        message (descriptor(), head_lines())."""
        if not arrays:
            return list(pieces)
        total = 0
        for index, _ in arrays:
            total = _aligned(total) + memoryview(pieces[index]).nbytes
        segment = self.reserve(total)
        if segment is None:
            return list(pieces)
        out: list[Any] = []
        heads = dict(arrays)
        offset = 0
        for i, piece in enumerate(pieces):
            if i not in heads:
                out.append(piece)
                continue
            data = memoryview(piece).cast("B")
            offset = _aligned(offset)
            segment.view[offset:offset + data.nbytes] = data
            # The byte string's head ends the piece before: a reference
            # takes its place.
            out[-1] = bytes(memoryview(out[-1])[:len(out[-1]) - heads[i]])
            out.append(_head(6, SHARED_BYTES_TAG) + _head(4, 3) + _head(0, 0) +
                       _head(0, offset) + _head(0, data.nbytes))
            offset += data.nbytes
        return out


def _aligned(at: int) -> int:
    return (at + 63) & ~63


def _head(major: int, length: int) -> bytes:
    major <<= 5
    if length < 24:
        return bytes((major | length,))
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes((major | info,)) + length.to_bytes(size, "big")
    raise ValueError(length)


def _count(text: str) -> int:
    if not text:
        return 0
    if not text.isdigit() or len(text) > 3 or int(text) > MAX_DESCRIPTORS:
        raise SegmentError(f"{protocol.HEADER_SEGMENTS} is not a count of at most "
                           f"{MAX_DESCRIPTORS} segments")
    return int(text)


def reference(received: Sequence[Arrival], index: object, offset: object,
              length: object) -> tuple[Arrival, int, int]:
    """The bytes a reference [index, offset, length] stands for: (the
    segment's arrival, offset, length); raises ValueError for one outside
    what the message brought."""
    if not received:
        raise ValueError("a reference to shared memory in a message that brought no segment")
    if not (isinstance(index, int) and isinstance(offset, int) and isinstance(length, int)
            and min(index, offset, length) >= 0):
        raise ValueError("a reference to shared memory is an array of 3 unsigned integers: "
                         "[segment, offset, length]")
    if index >= len(received):
        raise ValueError(f"a reference to segment {index} of a message that brought {len(received)}")
    arrival = received[index]
    if offset > arrival.segment.size or length > arrival.segment.size - offset:
        raise ValueError(f"a reference to bytes {offset} to {offset} + {length} of a segment of "
                         f"{arrival.segment.size} bytes")
    return arrival, offset, length


def listen_unix(path: str) -> socket.socket:
    """A stream socket listening at `path`, this user's only (0600). A
    socket already there is an earlier life's of the same node and is
    replaced; any other file is left, and this raises FileExistsError. A
    path too long for a unix socket's address is reached through its
    directory (/proc/self/fd/<dir>/<name>)."""
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
        else:
            raise FileExistsError(f"{path} is there and is not a socket")
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            sock.setsockopt(socket.SOL_SOCKET, option, 4 << 20)
        with _Reachable(path) as address:
            sock.bind(address)
        os.chmod(path, 0o600)
        sock.listen(512)
        return sock
    except BaseException:
        sock.close()
        raise


def connect_unix(path: str, timeout: float | None) -> socket.socket:
    """A stream socket connected to the unix socket at `path`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with _Reachable(path) as address:
            sock.connect(address)
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            sock.setsockopt(socket.SOL_SOCKET, option, 4 << 20)
        return sock
    except BaseException:
        sock.close()
        raise


class _Reachable:
    """`path` as a unix socket's address: itself, or through its directory
    when too long (108 bytes)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.directory: int | None = None

    def __enter__(self) -> str:
        if len(os.fsencode(self.path)) < 108:
            return self.path
        head, name = os.path.split(self.path)
        self.directory = os.open(head or "/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        return f"/proc/self/fd/{self.directory}/{name}"

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.directory is not None:
            os.close(self.directory)


def host_identity() -> str | None:
    """Which kernel and network namespace this process runs in, as the C++
    side writes it (wire/local_socket.hpp): "<boot id>/<dev>:<inode>"; None
    if the boot id cannot be read."""
    try:
        with open(protocol.SAME_HOST_BOOT_ID) as f:
            boot = f.read().strip()
        network = os.stat(protocol.SAME_HOST_NETWORK_NAMESPACE)
    except OSError:
        return None
    return f"{boot}/{network.st_dev}:{network.st_ino}" if boot else None


def receive_into(sock: socket.socket, view: memoryview, fds: list[int]) -> tuple[int, bool]:
    """recv_into over a unix socket that keeps the descriptors that came with
    the bytes (appended to `fds`, close-on-exec; past MAX_DESCRIPTORS they
    are closed). Returns (bytes read, whether descriptors were lost)."""
    count, ancillary, flags, _ = sock.recvmsg_into(
        [view], socket.CMSG_SPACE(MAX_DESCRIPTORS * _INT), socket.MSG_CMSG_CLOEXEC)
    lost = bool(flags & socket.MSG_CTRUNC)
    for level, kind, data in ancillary:
        if level != socket.SOL_SOCKET or kind != socket.SCM_RIGHTS:
            continue
        came = array.array("i")
        came.frombytes(data[:len(data) - len(data) % _INT])
        for fd in came:
            if len(fds) < MAX_DESCRIPTORS:
                fds.append(fd)
            else:
                os.close(fd)
                lost = True
    return count, lost


def send_with(sock: socket.socket, pieces: Sequence[Any], fd: int | None) -> int:
    """sendmsg of `pieces` with descriptor `fd` (None: none) on the first
    bytes that leave; returns the bytes sent."""
    ancillary = [] if fd is None else [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                        array.array("i", [fd]).tobytes())]
    return sock.sendmsg(pieces, ancillary)
