#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_client into tests/fuzz/corpus_client/.

An input is <mode byte> <rest> (fuzz_client.cpp says more):

- 'h' (even: HTTP, accepting bodies up to 1 MiB), or 'b' (16 bytes), then
  the bytes a node sends back on the connection;
- 'a' (odd, bit 1 clear: a JSON reply) or 'c' (bit 1 set: CBOR), a status
  byte (an index into fuzz_client.cpp's statuses[]: 0 is 200, 1 400, 5 500,
  6 503...), then the reply's body.

Run it again after changing the seeds below; the files it writes are
committed. Standard library only: CBOR comes from make_corpus.py.
"""
import json
import pathlib
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_corpus import Tagged, cbor  # noqa: E402

STATUS = {200: 0, 400: 1, 404: 2, 413: 3, 415: 4, 500: 5, 503: 6, 401: 7, 204: 8, 302: 9,
          999: 10, 100: 11}


def js(value):
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def reply(status, body, fmt):
    """A reply seed: fmt 'a' (JSON) or 'c' (CBOR)."""
    raw = body if isinstance(body, bytes) else (js(body) if fmt == "a" else cbor(body))
    return fmt.encode() + bytes([STATUS[status]]) + raw


def http(head, body=b"", mode=b"h", length=True):
    """A response seed: the head's lines (without the blank line), then the body."""
    if isinstance(body, str):
        body = body.encode()
    lines = list(head)
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return mode + ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def error(code, message, node="n", method="m"):
    return {"error": {"code": code, "message": message, "node": node, "method": method}}


CBOR_OK = ["HTTP/1.1 200 OK", "Content-Type: application/cbor"]
JSON_OK = ["HTTP/1.1 200 OK", "Content-Type: application/json"]
TENSOR = {"shape": [2, 2], "data": Tagged(77, struct.pack("<4h", 1, -2, 3, -4))}
BOX = {"width": 1.5, "height": 2.0, "tags": [1, 2], "note": None}

SEEDS = {
    # Whole responses, as a node writes them.
    "http-cbor-long": http(CBOR_OK, cbor({"result": 42})),
    "http-cbor-string": http(CBOR_OK, cbor({"result": "h\u00e9llo"})),
    "http-cbor-floats": http(CBOR_OK, cbor({"result": Tagged(85, struct.pack("<3f", 1, 2.5, -3))})),
    "http-cbor-tensor": http(CBOR_OK, cbor({"result": TENSOR})),
    "http-cbor-void": http(CBOR_OK, cbor({"result": None})),
    "http-json-box": http(JSON_OK, js({"result": BOX})),
    "http-json-map": http(JSON_OK + ["Connection: keep-alive"], js({"result": {"a": 1, "b": 2}})),
    "http-error-500": http(["HTTP/1.1 500 Internal Server Error", "Content-Type: application/json"],
                           js(error("remote_exception", "boom"))),
    "http-error-503-stopping": http(["HTTP/1.1 503 Service Unavailable",
                                     "Content-Type: application/cbor"],
                                    cbor(error("stopping", "the program stops"))),
    "http-error-404": http(["HTTP/1.1 404 Not Found", "Content-Type: application/cbor"],
                           cbor(error("no_such_method", "no method m"))),
    "http-401-text": http(["HTTP/1.1 401 Unauthorized", "Content-Type: text/plain"], "no"),
    "http-chunked": b"h" + b"HTTP/1.1 200 OK\r\nContent-Type: application/cbor\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n3;x=y\r\n" + cbor({"result": 1})[:3] +
                    b"\r\n" + b"%x\r\n" % len(cbor({"result": 1})[3:]) + cbor({"result": 1})[3:] +
                    b"\r\n0\r\nTrailer: t\r\n\r\n",
    "http-10-to-close": b"h" + b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" +
                        js({"result": [1, 2, 3]}),
    "http-continue": b"h" + b"HTTP/1.1 100 Continue\r\n\r\n" +
                     http(CBOR_OK + ["Connection: close"], cbor({"result": True}), mode=b""),
    "http-204": http(["HTTP/1.1 204 No Content", "Content-Type: application/cbor"], length=False),
    "http-too-large": http(CBOR_OK, cbor({"result": "x" * 40}), mode=b"b"),
    "http-two-lengths": b"h" + b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
    "http-trailing-bytes": http(CBOR_OK, cbor({"result": 1})) + b"HTTP",
    "http-bad-status": b"hHTTP/1.1 2x0 OK\r\n\r\n",
    "http-no-reason": b"hHTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
    "http-truncated-head": b"hHTTP/1.1 200 OK\r\nContent-Le",
    "http-empty": b"h",
    # Replies, straight to the decoding.
    "json-long": reply(200, {"result": 42}, "a"),
    "json-negative": reply(200, {"result": -9223372036854775808}, "a"),
    "json-double": reply(200, {"result": 1.5e300}, "a"),
    "json-string": reply(200, {"result": "\u2603"}, "a"),
    "json-vector": reply(200, {"result": [1, 2, 3]}, "a"),
    "json-tuple": reply(200, {"result": [1, "x"]}, "a"),
    "json-point": reply(200, {"result": {"x": 1, "y": 2.5, "label": "p"}}, "a"),
    "json-box": reply(200, {"result": BOX}, "a"),
    "json-tensor": reply(200, {"result": {"shape": [3], "data": [1, 2, 3]}}, "a"),
    "json-null": reply(200, {"result": None}, "a"),
    "json-no-result": reply(200, {"other": 1}, "a"),
    "json-error-400": reply(400, error("bad_request", "no"), "a"),
    "json-error-bad-fields": reply(500, {"error": {"code": 5, "message": None}}, "a"),
    "json-error-not-object": reply(500, {"error": "boom"}, "a"),
    "json-stopping": reply(503, error("stopping", "stops"), "a"),
    "json-garbage": reply(200, b"{\"result\": [1, 2", "a"),
    "json-deep": reply(200, b"{\"result\": " + b"[" * 200 + b"]" * 200 + b"}", "a"),
    "cbor-long": reply(200, {"result": 18446744073709551615}, "c"),
    "cbor-negative": reply(200, {"result": -5}, "c"),
    "cbor-half": reply(200, b"\xa1\x66result\xf9\x3c\x00", "c"),
    "cbor-float": reply(200, b"\xa1\x66result\xfa\x7f\x80\x00\x00", "c"),  # infinity
    "cbor-nan": reply(200, b"\xa1\x66result\xfb\x7f\xf8\x00\x00\x00\x00\x00\x00", "c"),
    "cbor-bool": reply(200, {"result": True}, "c"),
    "cbor-string": reply(200, {"result": "\u00e9t\u00e9"}, "c"),
    "cbor-bytes": reply(200, {"result": b"\x00\x01\x02"}, "c"),
    "cbor-floats": reply(200, {"result": Tagged(85, struct.pack("<3f", 1, 2, 3))}, "c"),
    "cbor-doubles-be": reply(200, {"result": Tagged(82, struct.pack(">2d", 1, 2))}, "c"),
    "cbor-ints": reply(200, {"result": Tagged(78, struct.pack("<3i", 1, -2, 3))}, "c"),
    "cbor-tensor": reply(200, {"result": TENSOR}, "c"),
    "cbor-tensor-short": reply(200, {"result": {"shape": [3, 3], "data": Tagged(77, b"\x01\x00")}},
                               "c"),
    "cbor-tensor-huge-shape": reply(200, {"result": {"shape": [1 << 62, 4], "data": []}}, "c"),
    "cbor-map": reply(200, {"result": {"a": 1, "\u00e9": -2}}, "c"),
    "cbor-set": reply(200, {"result": [3, 1, 2]}, "c"),
    "cbor-point": reply(200, {"result": {"x": 1.0, "y": -2, "label": "p"}}, "c"),
    "cbor-box": reply(200, {"result": dict(BOX, note="n")}, "c"),
    "cbor-color": reply(200, {"result": 200}, "c"),
    "cbor-tuple": reply(200, {"result": [7, "seven"]}, "c"),
    "cbor-indefinite": reply(200, b"\xbf\x66result\x9f\x01\x02\xff\xff", "c"),
    "cbor-truncated": reply(200, cbor({"result": [1, 2, 3]})[:-1], "c"),
    "cbor-trailing": reply(200, cbor({"result": 1}) + b"\x01", "c"),
    "cbor-deep": reply(200, b"\xa1\x66result" + b"\x81" * 200 + b"\x01", "c"),
    "cbor-huge-length": reply(200, b"\xa1\x66result\x9b\xff\xff\xff\xff\xff\xff\xff\xff", "c"),
    "cbor-tag": reply(200, b"\xa1\x66result\xc1\x1a\x00\x01\x00\x00", "c"),
    "cbor-error-500": reply(500, error("remote_exception", "boom"), "c"),
    "cbor-error-200": reply(200, error("remote_exception", "an error with 200"), "c"),
    "cbor-stopping": reply(503, error("stopping", "stops"), "c"),
    "cbor-status-999": reply(999, {"result": 1}, "c"),
    "cbor-not-utf8": reply(200, b"\xa1\x66result\x62\xff\xfe", "c"),
}


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                       pathlib.Path(__file__).parent / "corpus_client")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
