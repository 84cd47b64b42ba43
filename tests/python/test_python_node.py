"""The Python half of a Python node (issue 42, first step): an object served
on the wire of a C++ node, and the comparison of its type hints with what
C++ declares. Called through the Python client, and by hand over raw HTTP as
curl would, with bad input of every kind."""

import dataclasses
import json
import socket
import time
import unittest

import launchpad_client as lp
from launchpad_client import NodeServer
from launchpad_client._wire import hints

SECRET = "0123456789abcdef0123456789abcdef"


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Learner:
    def __init__(self):
        self.total = 0

    def add(self, x: int) -> int:
        self.total += x
        return self.total

    def scale(self, values: list[hints.float32], k: float) -> list[hints.float32]:
        return [v * k for v in values]

    def nearest(self, p: Point) -> Point:
        return Point(p.x + 1, p.y)

    def count(self, words: dict[str, int]) -> tuple[int, str]:
        return sum(words.values()), ",".join(sorted(words))

    def fail(self, why: str) -> None:
        raise KeyError(why)

    def small(self) -> hints.int8:
        return 1000  # out of an int8's range

    def deadline(self) -> bool:
        return lp.caller_deadline() is not None


def raw(url, method, path, body=b"", headers=None, timeout=5):
    """One request over a fresh connection: (status, decoded JSON body)."""
    host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
    fields = {"Host": host, "Content-Length": str(len(body)), "Connection": "close"}
    fields.update(headers or {})
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload) if payload else None


class PythonNode(unittest.TestCase):
    def setUp(self):
        self.server = NodeServer(Learner(), node="learner", program="test", secret=SECRET).start()
        self.addCleanup(self.server.close)
        self.node = lp.connect(self.server.url, secret=SECRET)
        self.addCleanup(self.node.close)
        self.auth = {"Authorization": f"Bearer {SECRET}"}

    def call(self, method, body, **headers):
        return raw(self.server.url, "POST", f"/lp/v1/call/{method}", body.encode(),
                   {**self.auth, **headers})

    def test_calls_through_the_python_client(self):
        self.assertEqual(self.node.add(2), 2)
        self.assertEqual(self.node.add(3), 5)
        self.assertEqual(list(self.node.scale([1.0, 2.0], 2.0)), [2.0, 4.0])
        self.assertEqual(self.node.nearest({"x": 1.0, "y": 2.0}), {"x": 2.0, "y": 2.0})
        self.assertEqual(tuple(self.node.count({"a": 1, "b": 2})), (3, "a,b"))
        self.assertTrue(self.node.deadline())

    def test_the_paths_earlier_releases_gave_name_the_same_objects(self):
        # docs/python.md: launchpad_client.server and launchpad_client.hints
        # stay, beside the names at the top.
        from launchpad_client import hints as earlier_hints
        from launchpad_client.server import NodeServer as EarlierNodeServer
        from launchpad_client.server import caller_deadline
        self.assertIs(EarlierNodeServer, lp.NodeServer)
        self.assertIs(caller_deadline, lp.caller_deadline)
        self.assertIs(earlier_hints.float32, lp.float32)
        self.assertIs(earlier_hints.Tensor, lp.Tensor)
        self.assertIsInstance(self.node.futures, lp.Futures)

    def test_describe_has_the_hints_types(self):
        status, body = raw(self.server.url, "GET", "/lp/v1/describe", headers=self.auth)
        self.assertEqual(status, 200)
        self.assertEqual(body["node"], "learner")
        methods = {m["name"]: m for m in body["methods"]}
        self.assertEqual(methods["scale"]["params"][0],
                         {"kind": "typed_array", "element": {"kind": "floating", "bits": 32}})
        self.assertEqual(methods["add"]["result"], {"kind": "integer", "bits": 64, "signed": True})
        self.assertEqual(methods["nearest"]["params"][0]["kind"], "struct")

    def test_a_raised_exception_names_node_method_type_and_message(self):
        with self.assertRaises(lp.RemoteError) as caught:
            self.node.fail("no such key")
        e = caught.exception
        self.assertEqual((e.node, e.method, e.code, e.status), ("learner", "fail", "remote_exception", 500))
        self.assertIn("KeyError", e.message)
        self.assertIn("no such key", e.message)

    def test_wrong_types_from_curl_are_400_naming_the_argument(self):
        for body, words in (('["x"]', "argument 1 of add"), ("[1.5]", "argument 1 of add"),
                            ("[1, 2]", "takes 1 argument"), ("{}", "an array"),
                            ("[1", "not JSON")):
            status, reply = self.call("add", body)
            self.assertEqual(status, 400, body)
            self.assertEqual(reply["error"]["code"], "bad_request")
            self.assertIn(words, reply["error"]["message"], body)
            self.assertEqual(reply["error"]["node"], "learner")
        status, reply = self.call("nearest", '[{"x": 1.0}]')
        self.assertEqual(status, 400)
        self.assertIn("argument 1 of nearest", reply["error"]["message"])
        self.assertEqual(self.node.add(1), 1)  # serving on, and nothing ran

    def test_a_result_out_of_its_range_is_500_not_a_wrong_number(self):
        status, reply = self.call("small", "[]")
        self.assertEqual(status, 500)
        self.assertIn("the result of small", reply["error"]["message"])

    def test_the_secret_unknown_methods_and_routes(self):
        status, reply = raw(self.server.url, "POST", "/lp/v1/call/add", b"[1]")
        self.assertEqual((status, reply["error"]["code"]), (401, "unauthenticated"))
        status, reply = raw(self.server.url, "POST", "/lp/v1/call/add", b"[1]",
                            {"Authorization": "Bearer nope"})
        self.assertIn("not this launch's secret", reply["error"]["message"])
        status, reply = self.call("nope", "[]")
        self.assertEqual((status, reply["error"]["code"]), (404, "no_such_method"))
        self.assertIn("add", reply["error"]["message"])
        status, reply = raw(self.server.url, "GET", "/elsewhere", headers=self.auth)
        self.assertEqual((status, reply["error"]["code"]), (404, "no_such_route"))
        status, reply = raw(self.server.url, "GET", "/lp/v1/health")
        self.assertEqual((status, reply), (200, {"status": "serving"}))

    def test_a_huge_body_is_413_before_it_is_read(self):
        small = NodeServer(Learner(), node="small", program="test", secret=SECRET,
                           max_body=1024).start()
        self.addCleanup(small.close)
        started = time.monotonic()
        status, reply = raw(small.url, "POST", "/lp/v1/call/add", b"",
                            {**self.auth, "Content-Length": str(1 << 30)})
        self.assertEqual((status, reply["error"]["code"]), (413, "payload_too_large"))
        self.assertLess(time.monotonic() - started, 5)

    def test_malformed_http_is_answered_and_the_node_serves_on(self):
        host, port = self.server.host, self.server.port
        for request in (b"NONSENSE\r\n\r\n", b"GET / HTTP/1.0\r\n\r\n",
                        b"POST /lp/v1/call/add HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                        b"POST /lp/v1/call/add HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"):
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(request)
                head = s.recv(65536)
                self.assertRegex(head, rb"^HTTP/1.1 (400|501|505) ", request)
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(b"POST /lp/v1/call/add HTTP/1.1\r\nContent-Length: 100\r\n\r\n[1")
            s.shutdown(socket.SHUT_WR)  # half a body, then nothing
            s.recv(65536)
        self.assertEqual(self.node.add(1), 1)

    def test_metrics_count_calls_by_code(self):
        self.node.add(1)
        self.call("add", '["x"]')
        status, figures = raw(self.server.url, "GET", "/lp/v1/metrics",
                              headers={**self.auth, "Accept": "application/json"})
        self.assertEqual(status, 200)
        add = next(m for m in figures["methods"] if m["name"] == "add")
        self.assertEqual(add["by_code"], {"200": 1, "400": 1})
        self.assertEqual(add["calls"], 2)
        self.assertEqual(add["in_flight"], 0)


F32 = {"kind": "floating", "bits": 32, "type": "float"}
F64 = {"kind": "floating", "bits": 64, "type": "double"}
I64 = {"kind": "integer", "bits": 64, "signed": True, "type": "long"}


def declared(name, params, result):
    return {"name": name, "arity": len(params), "params": params, "result": result,
            "signature": f"{result.get('type')} {name}(...)"}


class TypeComparison(unittest.TestCase):
    """Each mismatch between C++'s declaration and the Python hints is named:
    node, method, and both types."""

    def problems(self, *entries):
        return hints.compare(list(entries), Learner, node="learner")

    def test_agreeing_types_have_no_problem(self):
        self.assertEqual(self.problems(
            declared("add", [I64], I64),
            declared("scale", [{"kind": "typed_array", "element": F32, "type": "std::vector<float>"}, F64],
                     {"kind": "typed_array", "element": F32}),
            declared("nearest", [{"kind": "struct", "type": "Point", "fields": [
                {"name": "x", "schema": F64}, {"name": "y", "schema": F64}]}],
                {"kind": "struct", "fields": [{"name": "x", "schema": F64}, {"name": "y", "schema": F64}]}),
        ), [])

    def test_a_plain_int_takes_any_width_and_an_exact_one_does_not(self):
        i32 = {"kind": "integer", "bits": 32, "signed": True, "type": "int"}
        self.assertEqual(self.problems(declared("add", [i32], i32)), [])
        [problem] = self.problems(declared("small", [], I64))
        self.assertIn("C++ long against Python int8 (widths differ)", problem)

    def test_a_missing_method(self):
        [problem] = self.problems(declared("train", [], I64))
        self.assertIn("learner: Learner.train", problem)
        self.assertIn("has no method train", problem)

    def test_a_wrong_arity(self):
        [problem] = self.problems(declared("add", [I64, I64], I64))
        self.assertIn("C++ declares 2 parameter(s)", problem)
        self.assertIn("Python takes 1", problem)

    def test_a_scalar_against_a_list(self):
        [problem] = self.problems(declared("scale", [F32, F64],
                                           {"kind": "typed_array", "element": F32}))
        self.assertIn("Learner.scale, parameter 1: C++ float against Python list[float32]", problem)

    def test_a_wrong_result(self):
        [problem] = self.problems(declared("add", [I64], {"kind": "string", "type": "std::string"}))
        self.assertIn("result: C++ std::string against Python int", problem)

    def test_struct_fields_by_name_and_order(self):
        [problem] = self.problems(declared("nearest", [{"kind": "struct", "type": "Point", "fields": [
            {"name": "y", "schema": F64}, {"name": "x", "schema": F64}]}],
            {"kind": "struct", "fields": [{"name": "x", "schema": F64}, {"name": "y", "schema": F64}]}))
        self.assertIn("fields ['y', 'x'] in C++, ['x', 'y'] in Python", problem)

    def test_a_fixed_size_array_is_not_a_list(self):
        [problem] = self.problems(declared("scale", [
            {"kind": "typed_array", "element": F32, "size": 3, "type": "std::array<float, 3>"}, F64],
            {"kind": "typed_array", "element": F32}))
        self.assertIn("exactly 3 items", problem)

    def test_hints_without_a_wire_form_are_named(self):
        class Bad:
            def f(self, x: object) -> None: ...

            def g(self, x) -> None: ...

        problems = hints.compare([declared("f", [I64], {"kind": "void"}),
                                  declared("g", [I64], {"kind": "void"})], Bad, node="bad")
        self.assertIn("object has no wire form", problems[0])
        self.assertIn("parameter x has no type hint", problems[1])


if __name__ == "__main__":
    unittest.main()
