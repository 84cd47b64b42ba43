"""HTTP/1.1 messages read from a stream of bytes (RFC 9112), for both sides.

A client reads replies and a node reads requests the same way: a head up
to its empty line, within a limit; field lines, one rule for both; a body
of a Content-Length, read into memory made for it at once, or chunked, within
the reader's limit. `Reader` holds that; each side makes one over its
socket and says how bytes come (`_recv`, `_recv_into`: the client waits
under a call's deadline on a non-blocking socket, a node's thread blocks)
and how each failure is put to its peer or its caller (the `_error_*`
methods), since a client raises its own exceptions and a node answers with
a status.
"""

from __future__ import annotations

from typing import Any

MAX_HEAD = 64 * 1024  # bytes of a message's start line and fields


class Reader:
    """Reads HTTP/1.1 messages from one connection; a subclass gives the
    bytes and phrases the errors."""

    def __init__(self) -> None:
        self._extra = b""  # bytes read past the last message's head, not yet used

    # --- What a side gives. ------------------------------------------------

    def _recv(self, received: int) -> bytes:
        """Some bytes, waiting for them as this side waits; b"" when the
        peer has closed. `received`: the bytes of this message so far."""
        raise NotImplementedError

    def _recv_into(self, view: memoryview, have: int, size: int) -> int:
        """Reads into `view`, as `_recv` waits; 0 when the peer has closed.
        `have` of the body's `size` bytes have come."""
        raise NotImplementedError

    def _error_head_too_large(self, limit: int) -> Exception:
        raise NotImplementedError

    def _error_ended(self, received: int, have: int | None, size: int | None) -> Exception:
        """The peer closed inside a message: `received` bytes of it had come;
        inside a body, `have` of its `size`."""
        raise NotImplementedError

    def _error_malformed(self, what: str, text: bytes | str) -> Exception:
        """A part of the message that is not HTTP: `what` names it ("field",
        "lengths", "chunk line", "chunk size", "chunk end"), `text` is it."""
        raise NotImplementedError

    def _error_body_too_large(self, size: int, limit: int) -> Exception:
        raise NotImplementedError

    def _new_body(self, size: int) -> Any:
        """Writable memory for a body of `size` bytes."""
        return bytearray(size)

    # --- The framing. ------------------------------------------------------

    def read_head(self, limit: int = MAX_HEAD) -> bytes | None:
        """The next message's head, without the empty line that ends it; None
        when the peer closed before any byte of it."""
        buffer = self._extra
        self._extra = b""
        received = len(buffer)
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(buffer) > limit:
                raise self._error_head_too_large(limit)
            data = self._recv(received)
            if not data:
                if not buffer.strip():
                    return None
                raise self._error_ended(received, None, None)
            received += len(data)
            buffer += data
        if end > limit:
            raise self._error_head_too_large(limit)
        head, self._extra = buffer[:end], buffer[end + 4:]
        return head

    def fields(self, lines: list[str]) -> dict[str, str]:
        """The field lines of a head, by lower-case name: "Name: value",
        the name a token with no white space around it (RFC 9112 has a
        reader refuse what it would have to guess at), and one
        Content-Length."""
        fields: dict[str, str] = {}
        for line in lines:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip() or " " in name:
                raise self._error_malformed("field", line)
            name = name.lower()
            value = value.strip()
            if name == "content-length" and fields.get(name, value) != value:
                raise self._error_malformed("lengths", value)
            fields[name] = value
        return fields

    def read_exact(self, size: int, limit: int) -> Any:
        """A body of `size` bytes: the bytes already read when they hold it
        whole, else memory made for it (`_new_body`) read into in place."""
        if size > limit:
            raise self._error_body_too_large(size, limit)
        extra = self._extra
        if len(extra) >= size:
            self._extra = extra[size:]
            return extra[:size] if len(extra) > size else extra
        body = self._new_body(size)
        have = len(extra)
        view = memoryview(body)
        view[:have] = extra
        self._extra = b""
        while have < size:
            count = self._recv_into(view[have:], have, size)
            if not count:
                raise self._error_ended(1 + have, have, size)
            have += count
        return body

    def read_line(self, limit: int = 4096) -> bytes:
        """One line of a chunked body (a size, a chunk's end, a trailer),
        without its CRLF."""
        buffer = self._extra
        while b"\r\n" not in buffer:
            if len(buffer) > limit:
                raise self._error_malformed("chunk line", buffer[:20])
            data = self._recv(1)
            if not data:
                raise self._error_ended(1, 0, None)
            buffer += data
        line, _, self._extra = buffer.partition(b"\r\n")
        return line

    def read_chunked(self, limit: int) -> bytearray:
        """A chunked body, its chunks joined; trailers read and dropped."""
        body = bytearray()
        while True:
            line = self.read_line().split(b";")[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise self._error_malformed("chunk size", line[:20]) from None
            if size == 0:
                while self.read_line():  # trailers, up to the empty line
                    pass
                return body
            if len(body) + size > limit:
                raise self._error_body_too_large(len(body) + size, limit)
            body += self.read_exact(size, limit)
            if self.read_line():
                raise self._error_malformed("chunk end", b"")
