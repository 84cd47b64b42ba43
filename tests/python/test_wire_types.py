"""Every wire type goes to a node and comes back equal, in CBOR and in JSON."""

import dataclasses
import math
import unittest

import launchpad_client as lp
from arrays import FORMATS, check_array, np
from programs import launch_wire_types

DTYPES = {  # method: element type
    "echo_f32": "float32", "echo_f64": "float64", "echo_i8": "int8", "echo_i16": "int16",
    "echo_i32": "int32", "echo_i64": "int64", "echo_u8": "uint8", "echo_u16": "uint16",
    "echo_u32": "uint32", "echo_u64": "uint64",
}


def setUpModule():
    global launched, program
    launched, program = launch_wire_types()
    unittest.addModuleCleanup(launched.stop)
    unittest.addModuleCleanup(program.close)


def nodes(label):
    """The node in every format this machine can speak."""
    url = program[label].url
    secret = lp.read_secret(launched.run_dir())
    for fmt in FORMATS:
        with lp.connect(url, secret=secret, format=fmt) as node:
            yield fmt, node


class Scalars(unittest.TestCase):
    def test_numbers_at_their_limits(self):
        cases = {
            "echo_int8": [-128, 0, 127], "echo_int16": [-32768, 32767],
            "echo_int32": [-2**31, 2**31 - 1], "echo_int64": [-2**63, 2**63 - 1],
            "echo_uint8": [0, 255], "echo_uint16": [65535], "echo_uint32": [2**32 - 1],
            "echo_uint64": [0, 2**64 - 1],
            "echo_float": [0.0, -1.5, 3.4028234663852886e38, 1.401298464324817e-45],
            "echo_double": [0.1, -2.5e300, 5e-324],
        }
        for fmt, node in nodes("scalars"):
            for method, values in cases.items():
                for value in values:
                    with self.subTest(fmt=fmt, method=method, value=value):
                        got = node.call(method, value)
                        self.assertEqual(got, value)
                        self.assertIs(type(got), type(value))

    def test_bool_void_and_strings(self):
        for fmt, node in nodes("scalars"):
            with self.subTest(fmt=fmt):
                self.assertIs(node.echo_bool(True), True)
                self.assertIs(node.echo_bool(False), False)
                self.assertIsNone(node.nothing())
                for text in ["", "plain", "héllo wörld", "日本語テキスト", "emoji 🚀🧪", "nul \0 inside",
                             "quote \" backslash \\ newline \n", "x" * 100_000]:
                    self.assertEqual(node.echo_string(text), text)

    def test_numpy_scalars_are_numbers(self):
        if np is None:
            self.skipTest("numpy is not installed (or hidden)")
        node = program["scalars"]
        self.assertEqual(node.echo_int32(np.int16(-7)), -7)
        self.assertEqual(node.echo_double(np.float32(0.5)), 0.5)
        self.assertIs(node.echo_bool(np.bool_(True)), True)

    @unittest.skipUnless(lp.have_cbor(), "cbor2 is not installed (or hidden)")
    def test_nan_and_infinities_through_cbor(self):
        node = program["scalars"]
        self.assertTrue(math.isnan(node.special("nan")))
        self.assertEqual(node.special("inf"), math.inf)
        self.assertEqual(node.special("-inf"), -math.inf)
        self.assertTrue(math.isnan(node.echo_double(math.nan)))
        self.assertEqual(node.echo_float(-math.inf), -math.inf)

    def test_nan_in_json_is_a_clear_error_both_ways(self):
        node = lp.connect(program["scalars"].url, secret=lp.read_secret(launched.run_dir()),
                          format="json")
        self.addCleanup(node.close)
        with self.assertRaisesRegex(ValueError, "NaN and infinities cannot travel in JSON"):
            node.echo_double(math.nan)
        with self.assertRaises(lp.RemoteError) as caught:
            node.special("inf")  # the node cannot write it as JSON
        self.assertEqual(caught.exception.status, 500)


class TypedArrays(unittest.TestCase):
    def test_every_dtype_round_trips(self):
        for fmt, node in nodes("arrays"):
            for method, dtype in DTYPES.items():
                with self.subTest(fmt=fmt, method=method):
                    if dtype.startswith("float"):
                        values = [0.0, -1.5, 2.25, 2.0**100 if dtype == "float32" else 1e300]
                    else:
                        bits = int(dtype.lstrip("uint"))
                        low, high = (0, 2**bits - 1) if dtype[0] == "u" else (-2**(bits - 1), 2**(bits - 1) - 1)
                        values = [low, 0, 1, high]
                    sent = np.array(values, dtype=dtype) if np is not None else values
                    check_array(self, node.call(method, sent), values, dtype)
                    check_array(self, node.call(method, values), values, dtype)  # a list too
                    check_array(self, node.call(method, []), [], dtype)

    @unittest.skipUnless(lp.have_cbor(), "cbor2 is not installed (or hidden)")
    def test_nan_and_infinities_in_a_typed_array(self):
        values = [math.nan, math.inf, -math.inf, 0.0]
        node = program["arrays"]
        for method, dtype in (("echo_f32", "float32"), ("echo_f64", "float64")):
            sent = np.array(values, dtype=dtype) if np is not None else values
            check_array(self, node.call(method, sent), values, dtype)

    @unittest.skipUnless(np is not None, "numpy is not installed (or hidden)")
    def test_numpy_conversions(self):
        node = program["arrays"]
        # Lossless conversions happen; lossy ones are refused before sending.
        check_array(self, node.echo_f64(np.arange(5, dtype=np.float32)), range(5), "float64")
        check_array(self, node.echo_i64(np.array([1, 2], dtype=np.int8)), [1, 2], "int64")
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_f32: expected float32 elements \(std::vector<float>\), got an array of float64; .*astype"):
            node.echo_f32(np.zeros(3))
        with self.assertRaisesRegex(TypeError, "1-D array"):
            node.echo_f32(np.zeros((2, 2), dtype=np.float32))
        # A strided view and the other byte order are sent right.
        strided = np.arange(10, dtype=np.float32)[::3]
        check_array(self, node.echo_f32(strided), [0, 3, 6, 9], "float32")
        swapped = np.array([1, 2, 3], dtype=">i4")
        check_array(self, node.echo_i32(swapped), [1, 2, 3], "int32")
        # In CBOR a result shares the reply's bytes: read-only, as the docs say.
        result = node.echo_f32(np.ones(4, dtype=np.float32))
        self.assertEqual(result.flags.writeable, node.format == "json")
        self.assertTrue(result.copy().flags.writeable)

    def test_bytes_and_array_module(self):
        import array
        node = program["arrays"]
        check_array(self, node.echo_u8(b"\x00\x01\xff"), [0, 1, 255], "uint8")
        check_array(self, node.echo_i8(bytearray(b"\xff")), [-1], "int8")
        check_array(self, node.echo_f64(array.array("d", [0.5, 1.5])), [0.5, 1.5], "float64")
        with self.assertRaisesRegex(TypeError, "float32 elements"):
            node.echo_f32(array.array("d", [0.5]))

    def test_element_values_are_checked(self):
        node = program["arrays"]
        with self.assertRaisesRegex(ValueError, r"argument 1 of echo_i8, element 1: 300 is out of range for signed char \[-128, 127\]"):
            node.echo_i8([1, 300])
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_i32, element 0: expected an integer \(int\), got float 1.5"):
            node.echo_i32([1.5])
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_f32: expected a list \(std::vector<float>\), got str '1, 2'"):
            node.echo_f32("1, 2")

    def test_64_mb_array(self):
        count = 16 * 1024 * 1024  # float32: 64 MiB
        node = program["arrays"].with_timeout(120)
        if np is not None and lp.have_cbor():
            values = np.arange(count, dtype=np.float32)
            back = node.echo_f32(values)
            self.assertEqual(back.shape, (count,))
            self.assertTrue(np.array_equal(back, values))
            self.assertEqual(node.count_f32(values), count)
        else:
            # In JSON 16M numbers take ~200 MB of text and half a minute of a
            # debug build's node: 4M come back, 1M go out.
            back = node.make_f32(count // 4)
            self.assertEqual(len(back), count // 4)
            self.assertEqual(back[-1], float(count // 4 - 1))
            small = [float(i) for i in range(count // 16)]
            self.assertEqual(node.count_f32(small), len(small))


class Tensors(unittest.TestCase):
    def test_tensors_keep_their_shape(self):
        for fmt, node in nodes("arrays"):
            for method, dtype in (("echo_tensor_f32", "float32"), ("echo_tensor_f64", "float64"),
                                  ("echo_tensor_i32", "int32"), ("echo_tensor_u8", "uint8")):
                with self.subTest(fmt=fmt, method=method):
                    data = list(range(24))
                    if np is not None:
                        sent = np.arange(24, dtype=dtype).reshape(2, 3, 4)
                        got = node.call(method, sent)
                        self.assertEqual(got.shape, (2, 3, 4))
                        self.assertEqual(got.dtype, np.dtype(dtype))
                        self.assertTrue(np.array_equal(got, sent))
                        self.assertEqual(node.call(method, np.zeros((0, 5), dtype=dtype)).shape, (0, 5))
                    got = node.call(method, {"shape": [4, 6], "data": data})
                    if np is not None:
                        self.assertEqual(got.shape, (4, 6))
                        check_array(self, got.reshape(-1), data, dtype)
                    else:
                        self.assertEqual(got["shape"], [4, 6])
                        check_array(self, got["data"], data, dtype)

    def test_a_tensor_that_does_not_fill_its_shape(self):
        node = program["arrays"]
        with self.assertRaisesRegex(ValueError, r"shape \[2, 3\] needs 6 values, got 5"):
            node.echo_tensor_f32({"shape": [2, 3], "data": [1, 2, 3, 4, 5]})
        # Unchecked, the node says the same.
        with self.assertRaisesRegex(lp.RemoteError, r"needs 6 values, got 5") as caught:
            node.call("echo_tensor_f32", {"shape": [2, 3], "data": [1, 2, 3, 4, 5]}, check=False)
        self.assertEqual(caught.exception.code, "bad_request")


class Containers(unittest.TestCase):
    def test_sequences_maps_tuples_optionals(self):
        for fmt, node in nodes("containers"):
            with self.subTest(fmt=fmt):
                self.assertEqual(node.echo_bools([True, False, True]), [True, False, True])
                self.assertEqual(node.echo_strings(["a", "β", ""]), ["a", "β", ""])
                nested = node.echo_nested([[1], [], [2, 3]])  # inner vectors of numbers: typed arrays
                for got, expected in zip(nested, [[1], [], [2, 3]], strict=True):
                    check_array(self, got, expected, "int32")
                self.assertEqual(node.echo_string_map({"x": 1.5, "ü": -2.0}), {"x": 1.5, "ü": -2.0})
                self.assertEqual(node.echo_pairs([(3, "c"), (-1, "a")]), [(3, "c"), (-1, "a")])
                self.assertEqual(node.echo_pair((7, "seven")), (7, "seven"))
                self.assertEqual(node.echo_tuple([1, 2.5, "x"]), (1, 2.5, "x"))
                check_array(self, node.echo_array3((1.0, 2.0, 3.0)), [1.0, 2.0, 3.0], "float64")
                self.assertEqual(node.echo_set({3, 1, 2}), [1, 2, 3])
                self.assertEqual(node.echo_optional(None), None)
                self.assertEqual(node.echo_optional(5), 5)

    def test_nested_structs_and_optionals(self):
        inner = {"id": 7, "name": "seven ✓", "values": [0.5, 1.5]}
        outer = {
            "inner": inner,
            "items": [inner, {"id": 8, "name": "", "values": []}],
            "extra": None,
            "by_name": {"a": inner},
            "weights": {"shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]},
            "note": "a note",
        }
        for fmt, node in nodes("containers"):
            with self.subTest(fmt=fmt):
                got = node.echo_outer(outer)
                self.assertEqual(got["inner"]["id"], 7)
                self.assertEqual(got["inner"]["name"], "seven ✓")
                # The schema says what each member is: a vector of numbers in a
                # struct is an ndarray, in either format, as a parameter is.
                check_array(self, got["inner"]["values"], [0.5, 1.5], "float32")
                self.assertEqual(len(got["items"]), 2)
                self.assertEqual(got["items"][1]["name"], "")
                self.assertIsNone(got["extra"])
                self.assertEqual(got["by_name"]["a"]["id"], 7)
                if np is not None:  # a tensor member: an ndarray of its shape
                    self.assertEqual(got["weights"].shape, (2, 2))
                    check_array(self, got["weights"].reshape(-1), [1.0, 2.0, 3.0, 4.0], "float32")
                else:
                    self.assertEqual(got["weights"]["shape"], [2, 2])
                self.assertEqual(got["note"], "a note")
                got = node.echo_outer({**outer, "extra": inner, "note": None})
                self.assertEqual(got["extra"]["id"], 7)
                self.assertIsNone(got["note"])
                self.assertEqual(node.echo_optional_struct(None), None)
                self.assertEqual(node.echo_optional_struct(inner)["name"], "seven ✓")
                self.assertEqual(node.echo_pixel({"r": 1, "g": 2, "b": 3}), {"r": 1, "g": 2, "b": 3})

    def test_a_plain_struct_as_a_dict_and_as_a_dataclass(self):
        # wire_types::Plain has no macro: its schema, from the names the
        # compiler gives, is a Hana struct's, and so is what the client does.
        @dataclasses.dataclass
        class Plain:
            label: str
            values: list[lp.float32]
            inner: dict | None

        inner = {"id": 7, "name": "seven", "values": [0.5]}
        for fmt, node in nodes("containers"):
            with self.subTest(fmt=fmt):
                got = node.echo_plain({"label": "p", "values": [1.5, 2.5], "inner": None})
                self.assertEqual(sorted(got), ["inner", "label", "values"])
                self.assertEqual(got["label"], "p")
                check_array(self, got["values"], [1.5, 2.5], "float32")
                self.assertIsNone(got["inner"])
                got = node.echo_plain(Plain("q", [3.0], inner))
                self.assertEqual(got["label"], "q")
                self.assertEqual(got["inner"]["name"], "seven")
                check_array(self, got["inner"]["values"], [0.5], "float32")
        node = program["containers"]
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_plain: expected a dict with member "
                                               r"'values' \(wire_types::Plain\), got dict \{'label': 'p'\}"):
            node.echo_plain({"label": "p"})
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_plain, member 'values', element 0: "
                                               r"expected a number \(float\), got str 'x'"):
            node.echo_plain({"label": "p", "values": ["x"], "inner": None})

    def test_a_numpy_array_inside_a_struct(self):
        if np is None:
            self.skipTest("numpy is not installed (or hidden)")
        got = program["containers"].echo_inner({"id": 1, "name": "n", "values": np.ones(3, np.float32)})
        self.assertEqual(list(got["values"]), [1.0, 1.0, 1.0])

    def test_container_arguments_are_checked(self):
        node = program["containers"]
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_string_map, a key: expected a str \(std::string\), got int 1"):
            node.echo_string_map({1: 2.0})
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_pair: expected a tuple of 2 \(std::pair<int, std::string>\), got tuple \(1,\)"):
            node.echo_pair((1,))
        with self.assertRaisesRegex(TypeError, r"expected a list of 3"):
            node.echo_array3([1.0])
        with self.assertRaisesRegex(TypeError, r"element 1: expected True or False \(bool\), got int 1"):
            node.echo_bools([True, 1])
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_optional: expected an integer \(int\), got str '5'"):
            node.echo_optional("5")
        # A struct is checked member by member, by the client as by the node.
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_inner: expected a dict with member "
                                               r"'name' \(wire_types::Inner\), got dict \{'id': 1\}"):
            node.echo_inner({"id": 1})
        with self.assertRaisesRegex(TypeError, r"argument 1 of echo_optional_struct, member 'values', "
                                               r"element 1: expected a number \(float\), got str 'x'"):
            node.echo_optional_struct({"id": 1, "name": "", "values": [0.5, "x"]})
        with self.assertRaisesRegex(lp.RemoteError, "name"):
            node.call("echo_inner", {"id": 1}, check=False)


if __name__ == "__main__":
    unittest.main()
