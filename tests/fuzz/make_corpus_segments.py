#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_segments into tests/fuzz/corpus_segments/.

An input is <flags> (<size> <fill>)* <method> '\\n' <Lp-Returned> '\\n' <body>
(tests/fuzz/fuzz_segments.cpp says what the flags are). Run it again after
changing the seeds below; the files it writes are committed. Standard
library only: CBOR is encoded by hand, with make_corpus.py's encoder.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_corpus import cbor_head as head  # noqa: E402

SHARED = 0x4C50  # cbor::shared_bytes_tag
FLOAT32, FLOAT64, INT16 = 85, 86, 77  # RFC 8746, little-endian


def reference(tag, segment, offset, length):
    return head(6, tag) + head(6, SHARED) + head(4, 3) + head(0, segment) + head(0, offset) + head(0, length)


def text(s):
    return head(3, len(s)) + s.encode()


def seed(flags, segments, method, returned, body):
    out = bytes([flags])
    for size, fill in segments:
        out += bytes([size, fill])
    return out + method.encode() + b"\n" + returned.encode() + b"\n" + body


SEALED, BULK, LIE, PIPE, READ_ONLY = 4, 8, 16, 32, 64
SEEDS = {
    "floats": seed(1 | SEALED | BULK, [(4, 0x3F)], "floats", "0",
                   head(4, 1) + reference(FLOAT32, 0, 64, 512)),
    "floats-two": seed(2 | SEALED | BULK, [(4, 1), (8, 2)], "floats", "",
                       head(4, 1) + reference(FLOAT32, 1, 0, 2048)),
    "sum": seed(1 | SEALED, [(2, 0x40)], "sum", "0", head(4, 1) + reference(FLOAT64, 0, 0, 256)),
    "tensor": seed(1 | SEALED | BULK, [(1, 0)], "tensor", "0",
                   head(4, 1) + head(5, 2) + text("data") + reference(INT16, 0, 0, 16)
                   + text("shape") + head(4, 1) + head(0, 8)),
    "tensor-read-only": seed(1 | SEALED | READ_ONLY, [(1, 0)], "tensor", "",
                             head(4, 1) + head(5, 2) + text("data") + reference(INT16, 0, 0, 16)
                             + text("shape") + head(4, 1) + head(0, 8)),
    "keep": seed(1 | SEALED | BULK, [(16, 0)], "keep", "0",
                 head(4, 1) + head(5, 2) + text("shape") + head(4, 1) + head(0, 1024)
                 + text("data") + reference(FLOAT32, 0, 0, 4096)),
    "any": seed(1 | SEALED, [(1, 0x41)], "any", "", head(4, 1) + reference(64, 0, 8, 8)),
    "unsealed": seed(1, [(1, 0)], "floats", "", head(4, 1) + reference(FLOAT32, 0, 0, 16)),
    "lie": seed(1 | SEALED | LIE, [(1, 0)], "floats", "", head(4, 1) + reference(FLOAT32, 0, 0, 16)),
    "pipe": seed(1 | SEALED | PIPE, [(1, 0)], "floats", "", head(4, 1) + reference(FLOAT32, 0, 0, 16)),
    "past-end": seed(1 | SEALED, [(1, 0)], "floats", "", head(4, 1) + reference(FLOAT32, 0, 200, 100)),
    "no-segment": seed(SEALED, [], "floats", "", head(4, 1) + reference(FLOAT32, 0, 0, 16)),
    "bad-reference": seed(1 | SEALED, [(1, 0)], "floats", "",
                          head(4, 1) + head(6, FLOAT32) + head(6, SHARED) + head(4, 2) + head(0, 0) + head(0, 4)),
    "returned-junk": seed(1 | SEALED | BULK, [(4, 0)], "floats", "9,x,,18446744073709551616",
                          head(4, 1) + reference(FLOAT32, 0, 0, 1024)),
    "empty-segment": seed(1 | SEALED, [(0, 0)], "floats", "", head(4, 1) + reference(FLOAT32, 0, 0, 0)),
}

if __name__ == "__main__":
    out = pathlib.Path(__file__).resolve().parent / "corpus_segments"
    out.mkdir(exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
