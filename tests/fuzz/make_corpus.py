#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_dispatch into tests/fuzz/corpus/.

An input is <format byte> <method> '\\n' <body>: 'j' (even) for a JSON body,
'c' (odd) for CBOR. Run it again after changing the seeds below; the files it
writes are committed. Standard library only: CBOR is encoded by hand.
"""
import json
import pathlib
import struct
import sys


def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, n)
    raise ValueError(n)


class Tagged:
    """A tag on a value: Tagged(85, b"...") is an RFC 8746 float32 LE typed array."""

    def __init__(self, tag, value):
        self.tag, self.value = tag, value


def cbor(value):
    """RFC 8949 encoding of a JSON-like value (bytes is a CBOR byte string)."""
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    if isinstance(value, float):
        return b"\xfb" + struct.pack(">d", value)
    if isinstance(value, bytes):
        return cbor_head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogateescape")
        return cbor_head(3, len(raw)) + raw
    if isinstance(value, list):
        return cbor_head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, Tagged):
        return cbor_head(6, value.tag) + cbor(value.value)
    if isinstance(value, dict):
        return cbor_head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


def j(method, body):
    text = body if isinstance(body, (bytes, str)) else json.dumps(body, ensure_ascii=False)
    if isinstance(text, str):
        text = text.encode("utf-8")
    return b"j" + method.encode() + b"\n" + text


def c(method, body):
    raw = body if isinstance(body, bytes) else cbor(body)
    return b"c" + method.encode() + b"\n" + raw


POINT = {"x": 1, "y": -2, "label": "p"}
BOX = {"width": 1.5, "height": 2.0, "tags": [1, 2], "note": None}

SEEDS = {
    # A valid call of every method, in JSON and in CBOR.
    "add.json": j("add", [40, 2]),
    "add.cbor": c("add", [-40, 2]),
    "mix.json": j("mix", [255, 65535, 18446744073709551615, -32768]),
    "mix.cbor": c("mix", [1, 2, 3, -4]),
    "scale.json": j("scale", [1.5, 2.0]),
    "scale.cbor": c("scale", [1e300, 3.5]),
    "negate.json": j("negate", [True]),
    "negate.cbor": c("negate", [False]),
    "echo.json": j("echo", ["h\u00e9llo \u2603 \U0001f600"]),
    "echo.cbor": c("echo", ["h\u00e9llo"]),
    "repeat.json": j("repeat", ["ab", 3]),
    "repeat.cbor": c("repeat", ["\u00e9", 8]),
    "split.json": j("split", ["a,b,,c", 44]),
    "split.cbor": c("split", ["a b", 32]),
    "sum.json": j("sum", [[1, 2, 3, -2147483648, 2147483647]]),
    "sum.cbor": c("sum", [[1, 2, 3]]),
    "tally.json": j("tally", [{"a": 1, "b": -2}]),
    "tally.cbor": c("tally", [{"a": 1, "\u00e9": 2}]),
    "halve.json": j("halve", [7]),
    "halve-null.json": j("halve", [None]),
    "halve.cbor": c("halve", [None]),
    "move.json": j("move", [POINT, 3, 4]),
    "move.cbor": c("move", [POINT, -3, 4]),
    "grow.json": j("grow", [BOX, 2.0]),
    "grow.cbor": c("grow", [dict(BOX, note="n"), 0.5]),
    "forget.json": j("forget", []),
    "remember.cbor": c("remember", ["x"]),
    "rgb.json": j("rgb", [[1.0, 2.5, -3]]),
    "rgb.cbor": c("rgb", [Tagged(85, struct.pack("<3f", 1.0, 2.5, -3.0))]),
    "rgb-array.cbor": c("rgb", [[1.0, 2, 3]]),
    "uniq.json": j("uniq", [[3, 1, 3, 2]]),
    "uniq.cbor": c("uniq", [[-1, 5]]),
    "weigh.json": j("weigh", [{"a": 0.5, "b": 2}]),
    "weigh.cbor": c("weigh", [{"\u00e9": 1.0}]),
    "paint.json": j("paint", [0]),
    "paint.cbor": c("paint", [200]),
    "raw.json": j("raw", [{"a": [1, "x", None, True, 2.5, {"b": []}]}]),
    "raw.cbor": c("raw", [[Tagged(85, b"\x00\x00\x80\x3f"), b"\x01", -5, {"k": "v"}]]),
    "fail.json": j("fail", ["boom"]),
    "fail-int.cbor": c("fail", ["int"]),
    "fail-logic.json": j("fail", ["logic"]),
    # Refused calls.
    "unknown-method.json": j("nosuch", []),
    "unknown-method.cbor": c("", []),
    "wrong-arity.json": j("add", [1]),
    "wrong-arity.cbor": c("forget", [1, 2, 3]),
    "wrong-type.json": j("add", ["1", 2]),
    "wrong-type-nested.json": j("sum", [[1, "2"]]),
    "wrong-type-struct.cbor": c("move", [{"x": 1}, 0, 0]),
    "out-of-range.json": j("mix", [256, 0, 0, 0]),
    "not-an-array.json": j("add", {"a": 1}),
    "rgb-short.json": j("rgb", [[1, 2]]),
    "rgb-short.cbor": c("rgb", [Tagged(85, struct.pack("<2f", 1.0, 2.0))]),
    "rgb-other-type.cbor": c("rgb", [Tagged(86, struct.pack("<3d", 1.0, 2.0, 3.0))]),
    "rgb-indefinite.cbor": c("rgb", b"\x81\x9f\xf9\x3c\x00\x02\x03\xff"),
    "paint-out-of-range.json": j("paint", [256]),
    "paint-float.cbor": c("paint", [1.5]),
    "weigh-misfits.cbor": c("weigh", [{"b": "x", "a": "y"}]),
    "uniq-not-array.cbor": c("uniq", [{"a": 1}]),
    "empty-body.json": j("forget", b""),
    "no-separator.json": b"jforget",
    # Malformed bodies.
    "deep.json": j("echo", "[" * 200 + "]" * 200),
    "deep.cbor": c("echo", b"\x81" * 200 + b"\x01"),
    "deep-indefinite.cbor": c("echo", b"\x9f" * 200 + b"\xff" * 200),
    "truncated.cbor": c("add", cbor([1, 2])[:-1]),
    "truncated-string.cbor": c("echo", b"\x81\x7a\x00\x01\x00\x00ab"),
    "tag.cbor": c("echo", b"\x81\xc0\x61a"),
    "bytes.cbor": c("echo", [b"\x00\x01"]),
    "garbage.json": j("add", b"[1, 2"),
}


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "corpus")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
