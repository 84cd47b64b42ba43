"""Values as a Launchpad program's nodes pass them (issue 53 item 2;
launchpad_client/_wire/untyped.py): every type Courier carries comes back
the type it went, tuples, dict keys, numpy arrays of every dtype and shape
and numpy scalars included; keyword arguments arrive as keywords; what has
no form raises a TypeError naming its type; and a body that is not such a
value, malformed or hostile, is a 400 from a node that goes on serving.
Through a real NodeServer(untyped=True) and Launchpad's CourierClient."""

import math
import random
import socket
import time
import unittest

import launchpad_client as lp
from launchpad_client import NodeServer

try:
    import cbor2
    import numpy as np
except ImportError:  # the JSON-only and no-numpy variants of the suite
    cbor2 = np = None

from test_python_node import SECRET, raw

FUZZ_CASES = 400
FUZZ_SECONDS = 60


class Echo:
    def echo(self, value):
        return value

    def named(self, a, b=2, *, c=3, **more):
        return (a, b, c, more)

    def unsendable(self):
        return {1, 2}

    def take(self, *args, **kwargs):
        return args, kwargs


class _Peer:
    """What CourierClient asks of its peer, over a connected Node."""

    def __init__(self, node):
        self.node = node

    def _use(self, action):
        return action(self.node)

    def _submit(self, method, spec, args, timeout, check):
        return self.node._submit(method, spec, args, timeout, check)


@unittest.skipUnless(cbor2 is not None and np is not None and lp.have_cbor() and lp.have_numpy(),
                     "untyped values travel in CBOR and arrays are numpy's")
class UntypedValues(unittest.TestCase):
    def setUp(self):
        from launchpad import CourierClient
        from launchpad_client._wire import codec, untyped
        self.codec, self.untyped = codec, untyped
        self.server = NodeServer(Echo(), node="echo/0", program="untyped", secret=SECRET,
                                 untyped=True).start()
        self.addCleanup(self.server.close)
        node = lp.Node(self.server.url, secret=SECRET)  # as a peer makes it: no describe
        self.addCleanup(node.close)
        self.client = CourierClient("echo/0")
        self.client._peer = _Peer(node)

    def assertSame(self, back, value, path="value"):
        self.assertIs(type(back), type(value), path)
        if isinstance(value, (np.ndarray, np.generic)):
            self.assertEqual(back.dtype, value.dtype.newbyteorder("="), path)
            self.assertEqual(np.shape(back), np.shape(value), path)
            self.assertTrue(np.array_equal(back, value, equal_nan=value.dtype.kind in "fc"), path)
            if isinstance(value, np.ndarray):
                self.assertTrue(back.flags.writeable, f"{path}: Courier's arrays are writable")
        elif isinstance(value, (list, tuple)):
            self.assertEqual(len(back), len(value), path)
            for i, (b, v) in enumerate(zip(back, value)):
                self.assertSame(b, v, f"{path}[{i}]")
        elif isinstance(value, dict):
            self.assertEqual([(type(k), k) for k in back], [(type(k), k) for k in value], path)
            for k in value:
                self.assertSame(back[k], value[k], f"{path}[{k!r}]")
        elif isinstance(value, float) and math.isnan(value):
            self.assertTrue(math.isnan(back), path)
        else:
            self.assertEqual(back, value, path)

    def values(self):
        dtypes = [bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
        arrays = []
        for dtype in dtypes:
            for shape in [(), (0,), (5,), (2, 3), (2, 1, 3), (0, 4), (1, 1, 1, 1, 2)]:
                arrays.append((np.arange(math.prod(shape)) % 3).astype(dtype).reshape(shape))
            arrays.append(dtype(1))  # a numpy scalar of each
        return [
            None, True, False, 0, -7, 2**62, 2**70, -(2**70), 2.5, float("inf"), float("nan"),
            "", "text é", b"", b"\x00\xff", [], [1, [2, "three"]], (), (1,), (1, (2, [3, (4,)])),
            {}, {"a": 1}, {1: "one", -2: "minus", 2.5: "f", None: "none", b"k": "bytes",
                          (1, "x"): "tuple", ((1, 2), (None,)): "nested", (): "empty"},
            {True: [(), {}]}, np.arange(6, dtype=">i4").reshape(2, 3),  # the other byte order
            np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.arange(10)[::3],
            np.array([1.5, np.nan, -np.inf], dtype=np.float32), arrays,
            {"nested": ({"x": np.eye(2)}, [np.float32(3.5), (np.bool_(False),)])},
        ]

    def test_each_value_comes_back_as_it_went(self):
        for value in self.values():
            with self.subTest(value=repr(value)[:80]):
                self.assertSame(self.client.echo(value), value)
                self.assertSame(self.client.futures.echo(value).result(timeout=10), value)

    def test_keyword_arguments_arrive_as_keywords(self):
        self.assertEqual(self.client.named(1), (1, 2, 3, {}))
        self.assertEqual(self.client.named(1, c=(5,), b=[4], z={2: 3}),
                         (1, [4], (5,), {"z": {2: 3}}))
        self.assertEqual(self.client.futures.named(a=0, c=1).result(timeout=10), (0, 2, 1, {}))
        with self.assertRaises(lp.RemoteError) as caught:
            self.client.named(1, nope=1, b=2, **{"a": 3})
        self.assertIn("multiple values for argument 'a'", str(caught.exception))

    def test_what_has_no_form_is_refused_naming_its_type(self):
        for value, named in [(object(), "of type object"), ({1, 2}, "of type set"),
                             (1j, "of type complex"), (np.array(["a"]), "dtype <U1"),
                             (np.array([None]), "dtype object"),
                             (np.array([1.0], dtype=np.longdouble), "dtype float128"),
                             (np.ma.array([1]), "MaskedArray"),
                             ([1, (2, lambda: 3)], "of type function")]:
            with self.subTest(named=named):
                with self.assertRaises(TypeError) as caught:
                    self.client.echo(value)
                self.assertIn(f"argument 1 of echo/0.echo is {named}"
                              if "dtype" not in named and "Masked" not in named
                              else named, str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            self.client.echo({frozenset(): 1})
        self.assertIn("a dict key of type frozenset", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            self.client.named(1, b=object())
        self.assertIn("keyword argument 'b' of echo/0.named is of type object",
                      str(caught.exception))
        with self.assertRaises(lp.RemoteError) as caught:
            self.client.unsendable()
        self.assertIn("the result of unsendable is of type set", str(caught.exception))

    def body(self, *arguments):
        return b"".join(bytes(p) for p in self.codec.encode(list(arguments), self.codec.CBOR))

    def call(self, body, accept="application/json"):
        return raw(self.server.url, "POST", "/lp/v1/call/echo", body,
                   {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/cbor",
                    "Accept": accept})

    def status_of(self, body, method="take"):
        host, port = self.server.url.rsplit("//", 1)[1].rsplit(":", 1)
        head = (f"POST /lp/v1/call/{method} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
                f"Authorization: Bearer {SECRET}\r\nContent-Type: application/cbor\r\n"
                f"Accept: application/cbor\r\nContent-Length: {len(body)}\r\n\r\n")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(head.encode() + body)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return int(data.split(b" ", 2)[1]) if data else None

    def test_a_value_that_is_none_of_these_is_400(self):
        T = cbor2.CBORTag
        typed = self.untyped.to_wire(np.arange(3, dtype=np.int32))
        cases = {
            "a shaped array of shape [2, 2] whose elements are not 4 numbers": T(40, [[2, 2], typed]),
            "a shaped array of shape [-1]": T(40, [[-1], typed]),
            "a shaped array that is not [shape, elements]": T(40, 5),
            "a shaped array of shape [2, 2] whose": T(40, [[2, 2], [1, 2, 3, 4]]),
            "more than 32 dimensions": T(40, [[1] * 33, self.untyped.to_wire(np.arange(1))]),
            "a numpy scalar that is not one element": T(19539, typed),
            "a value tagged 19540": T(19540, self.untyped.to_wire(np.arange(3.0))),
            "a value tagged 41": T(41, [1, 0]),
            "a value tagged 19537": T(19537, 5),
            "a value tagged 12345": T(12345, 1),
            "a value of type set": {1, 2},
            "a value of type decimal.Decimal": __import__("decimal").Decimal(1),
            "CBOR's undefined is not a value": cbor2.undefined,
            "a value tagged 19538": [T(19538, {"a": 1})],  # keywords, not last
        }
        for expected, value in cases.items():
            with self.subTest(expected=expected):
                status, reply = self.call(self.body(value))
                self.assertEqual(status, 400, reply)
                self.assertEqual(reply["error"]["code"], "bad_request")
                self.assertIn(expected.replace("more than 32 dimensions", "shape [1, 1"),
                              reply["error"]["message"])
        # A map's key that decodes to an array; keywords that are not names;
        # a list that holds itself (CBOR's shared references, tags 28/29);
        # a list of a million-element array referred to twice; a date
        # (tag 1) past what the platform's time_t holds.
        for body, expected in [
                (bytes.fromhex("81a1d94c5381d840420102" + "00"), "cannot be a key"),
                (self.body(T(19538, {1: 2})), "not a map of names"),
                (bytes.fromhex("81d81c81d81d00"), "appears twice"),
                (bytes.fromhex("8182d81c81d840") + b"\x5a\x00\x0f\x42\x40" + bytes(1000000) +
                 bytes.fromhex("d81d00"), "appears twice"),
                # cbor2 words it by its version: 'OverflowError: timestamp
                # out of range' (5.4), 'error decoding datetime from epoch'.
                (bytes.fromhex("81c1c3493fff5dffffffffffff"), ("timestamp", "datetime"))]:
            with self.subTest(expected=expected):
                status, reply = self.call(body)
                self.assertEqual(status, 400, reply)
                words = expected if isinstance(expected, tuple) else (expected,)
                self.assertTrue(any(w in reply["error"]["message"] for w in words), reply)
        status, _ = raw(self.server.url, "GET", "/lp/v1/health")
        self.assertEqual(status, 200)

    def test_mangled_bodies_are_answered_and_the_node_serves_on(self):
        """Random bytes changed, cut or added in valid bodies: every call is
        answered 200 or 400 (never a dropped connection, a 500 or a hang)."""
        rng = random.Random(53)
        seeds = [self.body(v) for v in self.values()[:-2]]
        seeds += [self.body(1, self.untyped.keywords_to_wire({"c": (1, np.eye(2))}, "x"))]
        seen = {}
        give_up = time.monotonic() + FUZZ_SECONDS
        for i in range(FUZZ_CASES):
            if time.monotonic() > give_up:
                break
            body = bytearray(rng.choice(seeds))  # answered in CBOR, which carries them all
            for _ in range(rng.randint(1, 4)):
                choice, at = rng.random(), rng.randrange(len(body) + 1)
                if choice < 0.5 and body:
                    body[at % len(body)] = rng.randrange(256)
                elif choice < 0.7:
                    del body[at:]
                else:
                    body[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
            status = self.status_of(bytes(body))
            self.assertIn(status, (200, 400), (i, bytes(body).hex()))
            seen[status] = seen.get(status, 0) + 1
        self.assertGreater(seen.get(400, 0), 10, seen)
        status, _ = raw(self.server.url, "GET", "/lp/v1/health")
        self.assertEqual(status, 200)

    def test_json_gets_json_values(self):
        """A call made by hand in JSON (curl): JSON's values both ways,
        tuples and arrays as lists; what JSON has no form for is a 500
        that says so."""
        def call(method, body):
            return raw(self.server.url, "POST", f"/lp/v1/call/{method}", body.encode(),
                       {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"})

        self.assertEqual(call("named", '[1, [2]]'), (200, {"result": [1, [2], 3, {}]}))
        status, reply = call("echo", '[{"1": 2}]')
        self.assertEqual((status, reply), (200, {"result": {"1": 2}}))
        status, reply = call("unsendable", '[]')
        self.assertEqual(status, 500)
        self.assertIn("of type set", reply["error"]["message"])
        self.assertEqual(self.untyped.to_wire((1, np.arange(4).reshape(2, 2), np.float32(2)),
                                              cbor=False), [1, [[0, 1], [2, 3]], 2.0])
        with self.assertRaises(TypeError) as caught:
            self.untyped.to_wire({1: 2}, "the result of m", cbor=False)
        self.assertIn("a dict key of type int, which JSON cannot carry", str(caught.exception))


@unittest.skipUnless(cbor2 is not None and np is not None and lp.have_cbor() and lp.have_numpy(),
                     "untyped values travel in CBOR and arrays are numpy's")
class Connected(unittest.TestCase):
    """launchpad_client.connect() to a Launchpad program's node, whose
    describe lists its methods untyped (arity None): the proxy's methods
    take any arguments and keyword arguments and carry them as a
    CourierClient does (before, describe's arity None was refused)."""

    def setUp(self):
        self.server = NodeServer(Echo(), node="echo/0", program="untyped", secret=SECRET,
                                 untyped=True).start()
        self.addCleanup(self.server.close)
        self.node = lp.connect(self.server.url, secret=SECRET)
        self.addCleanup(self.node.close)

    def test_untyped_methods_take_what_courier_takes(self):
        self.assertEqual(self.node.method_names(), ["echo", "named", "take", "unsendable"])
        value = (1, [2, (3.5, None)], {"k": np.arange(6, dtype=np.int16).reshape(2, 3)}, b"\x00")
        back = self.node.echo(value)
        self.assertIs(type(back), tuple)
        self.assertEqual(back[:2], (1, [2, (3.5, None)]))
        self.assertEqual(back[2]["k"].dtype, np.int16)
        self.assertTrue(np.array_equal(back[2]["k"], value[2]["k"]))
        self.assertEqual(back[3], b"\x00")
        self.assertEqual(self.node.named(1, c=(5,), b=[4], z={2: 3}),
                         (1, [4], (5,), {"z": {2: 3}}))
        self.assertEqual(self.node.futures.named(a=0, c=1).result(timeout=10), (0, 2, 1, {}))
        self.assertEqual(self.node.take.submit(1, x=2).result(timeout=10), ((1,), {"x": 2}))
        self.assertEqual(self.node.named(7, timeout=5.0), (7, 2, 3, {}))  # the call's own
        self.assertEqual(self.node.call("named", 8), (8, 2, 3, {}))
        self.assertEqual(str(self.node.echo.__signature__), "(*args, timeout=None, **kwargs)")
        self.assertIn("Untyped (a Launchpad program's node)", self.node.echo.__doc__)

    def test_errors_name_the_type_or_the_remote_error(self):
        with self.assertRaises(TypeError) as caught:
            self.node.echo({1, 2})
        self.assertIn("argument 1 of echo is of type set", str(caught.exception))
        with self.assertRaises(lp.RemoteError) as caught:
            self.node.named(1, nope=1, b=2, **{"a": 3})
        self.assertIn("multiple values for argument 'a'", str(caught.exception))
        with self.assertRaises(lp.RemoteError) as caught:
            self.node.unsendable()
        self.assertIn("of type set", str(caught.exception))
        with self.assertRaises(AttributeError) as caught:
            self.node.absent
        self.assertIn("its methods: echo, named, take, unsendable", str(caught.exception))

    def test_json_carries_positional_values(self):
        with lp.connect(self.server.url, secret=SECRET, format="json") as node:
            self.assertEqual(node.named(1, [2]), [1, [2], 3, {}])  # JSON's: lists
            with self.assertRaises(ValueError) as caught:
                node.named(1, c=2)
            self.assertIn("keyword arguments (c) go only in CBOR", str(caught.exception))


@unittest.skipUnless(cbor2 is not None and np is not None and lp.have_cbor() and lp.have_numpy(),
                     "untyped values travel in CBOR and arrays are numpy's")
class CppNodes(unittest.TestCase):
    """A C++ node never sees these values from a Launchpad program's own
    calls, but one sent to it (a Launchpad program calling a C++ node) is a
    400 that names the tag or key, and the node serves on."""

    @classmethod
    def setUpClass(cls):
        from programs import launch_wire_types
        cls.launched, cls.program = launch_wire_types()
        cls.addClassCleanup(cls.launched.stop)
        cls.addClassCleanup(cls.program.close)

    def test_tagged_values_are_400(self):
        from launchpad_client._wire import untyped
        containers, arrays = self.program["containers"], self.program["arrays"]
        cases = [
            (containers, "echo_tuple", untyped.to_wire((1, "a", 2.5)), "tag 19537"),
            (containers, "echo_nested", untyped.to_wire(np.ones((2, 2), dtype=np.int32)), "tag 40"),
            (containers, "echo_bools", untyped.to_wire(np.array([True])), "tag 41"),
            (arrays, "echo_i32", untyped.to_wire(np.int32(1)), "tag 19539"),
            (arrays, "echo_f32", untyped.to_wire(np.ones(2, dtype=np.complex64)), "tag 19540"),
            (containers, "echo_string_map", untyped.to_wire({1: 2}), "map key"),
            (containers, "echo_string_map", untyped.to_wire({(1,): 2}), "map key"),
        ]
        for node, method, value, named in cases:
            with self.subTest(method=method, named=named):
                with self.assertRaises(lp.RemoteError) as caught:
                    node.call(method, value, check=False)
                self.assertEqual((caught.exception.status, caught.exception.code),
                                 (400, "bad_request"))
                self.assertIn(named, caught.exception.message)
        with self.assertRaises(lp.RemoteError) as caught:
            arrays.call("echo_i32", [1], untyped.keywords_to_wire({"k": 1}, "x"), check=False)
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(list(arrays.echo_i32([1, 2])), [1, 2])


if __name__ == "__main__":
    unittest.main()
