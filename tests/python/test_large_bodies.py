"""A large CBOR body of arguments: its typed arrays reach the method as
numpy views of the received bytes (codec.decode_cbor's fast path), and
every other shape decodes as before."""

import struct
import unittest

import launchpad_client as lp
from launchpad_client._wire import codec

try:
    import cbor2
    import numpy as np
except ImportError:  # the JSON-only and numpy-less variants
    cbor2 = np = None


def received(data):
    """`data` as the server receives a large body: into a numpy buffer."""
    body = np.empty(len(data), dtype=np.uint8)
    body[:] = np.frombuffer(data, dtype=np.uint8)
    return body


def typed(tag, payload):
    return cbor2.dumps(cbor2.CBORTag(tag, payload))


@unittest.skipUnless(lp.have_cbor() and lp.have_numpy(), "needs cbor2 and numpy")
class LargeBodies(unittest.TestCase):
    def test_typed_arrays_are_views_of_the_body(self):
        values = np.arange(100_000, dtype="<f4")
        data = b"\x83" + typed(85, values.tobytes()) + cbor2.dumps("label") + cbor2.dumps({"k": [1, 2]})
        body = received(data)
        got = codec.decode_cbor(body)
        self.assertEqual(got[1:], ["label", {"k": [1, 2]}])
        self.assertTrue(np.array_equal(got[0], values))
        self.assertEqual(got[0].dtype, np.dtype("<f4"))
        self.assertTrue(np.shares_memory(got[0], body))  # no copy

    def test_the_other_byte_order_is_swapped(self):
        values = np.arange(20_000, dtype=">i4")
        body = received(b"\x81" + typed(66, values.tobytes()))  # int32, big endian
        got = codec.decode_cbor(body)[0]
        self.assertTrue(np.array_equal(got, values.astype("<i4")))

    def test_the_same_values_as_the_general_decoder(self):
        cases = [
            [np.arange(30_000, dtype="<f8"), None, True, -5, 2.5, b"raw"],
            [[1000, 2000, 3000] * 10_000],        # a large plain list
            {"not": "an array of arguments", "x": list(range(1000, 31_000))},
        ]
        for value in cases:
            with self.subTest(value=type(value).__name__):
                data = b"".join(codec.encode_cbor(value))
                self.assertGreaterEqual(len(data), codec.LARGE_ARRAY)
                fast, general = codec.decode_cbor(received(data)), codec.decode_cbor(bytes(data))
                self.assertEqual(repr(fast), repr(general))

    def test_a_damaged_body_still_fails(self):
        values = np.arange(50_000, dtype="<f4").tobytes()
        truncated = (b"\x82" + typed(85, values))  # says two items, holds one
        with self.assertRaises(Exception):
            codec.decode_cbor(received(truncated))
        trailing = b"\x81" + typed(85, values) + b"\x00"
        with self.assertRaises(ValueError):
            codec.decode_cbor(received(trailing))

    def test_a_large_json_body_in_a_numpy_buffer(self):
        data = ("[" + ",".join(["1.5"] * 30_000) + "]").encode()
        self.assertEqual(len(codec.decode_json(received(data))), 30_000)


if __name__ == "__main__":
    unittest.main()
