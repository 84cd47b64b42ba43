"""Types from describe's schemas (docs/protocol.md#introspection), without a
C++ node: each kind, a struct inside itself, schemas without spellings, and
a fake node's describe reply."""

import dataclasses
import json
import unittest

import launchpad_client as lp
from launchpad_client._wire import schema as s
from fake_node import FakeNode, describe_reply, method_entry, reply


def integer(bits, signed, spelling=None):
    out = {"kind": "integer", "bits": bits, "signed": signed}
    return out if spelling is None else {**out, "type": spelling}


F32 = {"kind": "floating", "bits": 32, "type": "float"}
TEXT = {"kind": "string", "type": "std::string"}


class Kinds(unittest.TestCase):
    def kind(self, schema):
        return type(s.from_schema(schema)).__name__

    def test_numbers(self):
        for bits in (8, 16, 32, 64):
            for signed in (True, False):
                with self.subTest(bits=bits, signed=signed):
                    parsed = s.from_schema(integer(bits, signed))
                    self.assertIsInstance(parsed, s.Integer)
                    self.assertEqual((parsed.element.size * 8, parsed.element.kind == "i"), (bits, signed))
                    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
                    self.assertEqual((parsed.low, parsed.high), (low, high))
        self.assertEqual(s.from_schema({"kind": "floating", "bits": 32}).element.name(), "float32")
        self.assertEqual(s.from_schema({"kind": "floating", "bits": 64}).element.name(), "float64")
        self.assertIsNone(s.from_schema({"kind": "floating", "bits": 128}).element)  # long double
        self.assertEqual(self.kind({"kind": "boolean"}), "Bool")
        enum = s.from_schema({"kind": "enumeration", "bits": 8, "signed": False, "type": "ns::Mode"})
        self.assertIsInstance(enum, s.Integer)
        with self.assertRaisesRegex(ValueError, r"argument 1: 256 is out of range for ns::Mode \[0, 255\]"):
            enum.to_wire(256, "argument 1")

    def test_containers(self):
        cases = {
            "String": TEXT,
            "Sequence": {"kind": "typed_array", "element": F32},
            "Map": {"kind": "map", "key": TEXT, "value": integer(32, True)},
            "FixedArray": {"kind": "sequence", "element": TEXT, "size": 3},
            "Tuple": {"kind": "tuple", "items": [integer(32, True), TEXT]},
            "Optional": {"kind": "optional", "value": TEXT},
            "Tensor": {"kind": "tensor", "element": integer(8, False)},
            "Struct": {"kind": "struct", "fields": [{"name": "x", "schema": F32}]},
            "Opaque": {"kind": "nlohmann", "type": "ns::Pixel"},
            "Void": {"kind": "void"},
        }
        for kind, schema in cases.items():
            with self.subTest(kind):
                self.assertEqual(self.kind(schema), kind)
        self.assertEqual(self.kind({"kind": "json"}), "Opaque")
        self.assertEqual(self.kind({"kind": "a kind of a newer node", "what": 1}), "Opaque")
        self.assertTrue(s.from_schema({"kind": "typed_array", "element": F32}).typed)
        self.assertFalse(s.from_schema({"kind": "sequence", "element": {"kind": "boolean"}}).typed)
        self.assertTrue(s.from_schema({"kind": "typed_array", "element": F32, "size": 2}).typed)
        with self.assertRaisesRegex(s.BadSchema, "no number type"):
            s.from_schema({"kind": "typed_array", "element": TEXT})
        with self.assertRaisesRegex(s.BadSchema, "without its 'element'"):
            s.from_schema({"kind": "sequence"})

    def test_names_come_from_the_spelling_else_from_the_schema(self):
        # The spelling is for messages only; without it, the checks are the same.
        spelled = {"kind": "map", "type": "std::map<std::string, int>",
                   "key": TEXT, "value": integer(32, True, "int")}
        bare = json.loads(json.dumps(spelled).replace('"type"', '"unread"'))
        for schema, name, value_name in ((spelled, "std::map<std::string, int>", "int"),
                                         (bare, "std::map<std::string, std::int32_t>", "std::int32_t")):
            with self.subTest(name):
                m = s.from_schema(schema)
                self.assertEqual(m.name, name)
                self.assertEqual(m.to_wire({"b": 2, "a": 1}, "argument 1"), {"b": 2, "a": 1})
                with self.assertRaisesRegex(TypeError, "argument 1, a key"):
                    m.to_wire({1: 2}, "argument 1")
                with self.assertRaisesRegex(TypeError, rf"argument 1, key 'a': expected an integer \({value_name}\)"):
                    m.to_wire({"a": "1"}, "argument 1")
        self.assertEqual(s.from_schema({"kind": "sequence", "unique": True, "element": integer(64, False)}).name,
                         "std::set<std::uint64_t>")
        self.assertEqual(s.from_schema({"kind": "tuple", "items": [{"kind": "boolean"}, F32]}).name,
                         "std::tuple<bool, float>")

    def test_structs_are_checked_member_by_member(self):
        point = s.from_schema({"kind": "struct", "type": "ns::Point", "fields": [
            {"name": "x", "schema": F32},
            {"name": "tags", "schema": {"kind": "optional", "value": {"kind": "sequence", "element": TEXT}}},
        ]})
        self.assertEqual(point.to_wire({"x": 1, "tags": None, "other": (1, 2)}, "argument 1"),
                         {"x": 1.0, "tags": None, "other": [1, 2]})  # others go as given
        with self.assertRaisesRegex(TypeError, r"argument 1: expected a dict with member 'tags' \(ns::Point\), got dict"):
            point.to_wire({"x": 1}, "argument 1")
        with self.assertRaisesRegex(TypeError, r"argument 1, member 'tags', element 1: expected a str \(std::string\), got int 2"):
            point.to_wire({"x": 1, "tags": ["a", 2]}, "argument 1")
        with self.assertRaisesRegex(TypeError, r"argument 1: expected a dict \(ns::Point\), got list"):
            point.to_wire([1, None], "argument 1")
        self.assertEqual(point.from_wire({"x": 2, "tags": ["a"]}), {"x": 2.0, "tags": ["a"]})

    def test_a_dataclass_is_a_struct(self):
        @dataclasses.dataclass
        class Point:
            x: float
            tags: list | None

        point = s.from_schema({"kind": "struct", "type": "ns::Point", "fields": [
            {"name": "x", "schema": F32},
            {"name": "tags", "schema": {"kind": "optional", "value": {"kind": "sequence", "element": TEXT}}},
        ]})
        self.assertEqual(point.to_wire(Point(1, ["a"]), "state()"), {"x": 1.0, "tags": ["a"]})
        with self.assertRaisesRegex(TypeError, r"state\(\), member 'tags', element 1"):
            point.to_wire(Point(1, ["a", 2]), "state()")

    def test_a_struct_inside_itself(self):
        tree = s.from_schema({"kind": "struct", "type": "ns::Tree", "fields": [
            {"name": "value", "schema": integer(32, True, "int")},
            {"name": "children", "schema": {"kind": "sequence", "type": "std::vector<ns::Tree>",
                                            "element": {"kind": "struct", "type": "ns::Tree", "recursive": 1}}},
        ]})
        self.assertIs(tree.fields["children"].element_type, tree)
        value = {"value": 1, "children": [{"value": 2, "children": []}]}
        self.assertEqual(tree.to_wire(value, "argument 1"), value)
        with self.assertRaisesRegex(TypeError, r"argument 1, member 'children', element 0, member 'value': "
                                               r"expected an integer \(int\), got str 'x'"):
            tree.to_wire({"value": 1, "children": [{"value": "x", "children": []}]}, "argument 1")
        with self.assertRaisesRegex(s.BadSchema, "2 levels up, inside 1"):
            s.from_schema({"kind": "struct", "fields": [
                {"name": "x", "schema": {"kind": "struct", "recursive": 2}}]})

    def test_method_types(self):
        entry = method_entry("add", [integer(64, True, "long int"), TEXT], integer(64, True, "long int"))
        params, result = s.method_types(entry)
        self.assertEqual([p.name for p in params], ["long int", "std::string"])
        self.assertEqual(result.name, "long int")
        with self.assertRaisesRegex(s.BadSchema, "arity 3 and 2 parameter schemas"):
            s.method_types({**entry, "arity": 3})


class FromAFakeNode(unittest.TestCase):
    """A proxy built from a describe reply: what it checks and converts comes
    from the schemas alone."""

    def serve(self, methods, results=None):
        def script(peer):
            while (request := peer.read_request()) is not None:
                head, body = request
                if head.startswith("GET /lp/v1/describe "):
                    peer.send(reply(200, "application/json", json.dumps(describe_reply("fake", methods))))
                else:
                    method = head.split()[1].rsplit("/", 1)[1]
                    self.sent.append((method, json.loads(body)))
                    result = (results or {}).get(method)
                    peer.send(reply(200, "application/json", json.dumps({"result": result})))
        self.sent = []
        node = FakeNode(script)
        self.addCleanup(node.close)
        proxy = lp.connect(node.url, secret="s3cret", format="json")
        self.addCleanup(proxy.close)
        return proxy

    def test_checks_and_results_follow_the_schema(self):
        sample = {"kind": "struct", "type": "ns::Sample", "fields": [
            {"name": "name", "schema": TEXT},
            {"name": "values", "schema": {"kind": "typed_array", "element": F32}},
            {"name": "pair", "schema": {"kind": "tuple", "items": [integer(32, True), TEXT]}},
        ]}
        proxy = self.serve([method_entry("put", [sample, {"kind": "json"}], {"kind": "void", "type": "void"}),
                            method_entry("get", [], sample)],
                           results={"get": {"name": "n", "values": [1, 2], "pair": [1, "a"], "extra": 1}})
        self.assertEqual(proxy.method_names(), ["put", "get"])
        self.assertIsNone(proxy.put({"name": "n", "values": [1.5], "pair": (1, "a")}, {"any": (1,)}))
        self.assertEqual(self.sent, [("put", [{"name": "n", "values": [1.5], "pair": [1, "a"]},
                                              {"any": [1]}])])
        with self.assertRaisesRegex(TypeError, r"argument 1 of put, member 'pair': expected a tuple of 2"):
            proxy.put({"name": "n", "values": [], "pair": (1,)}, None)
        with self.assertRaisesRegex(TypeError, r"put\(\) takes 2 arguments \(ns::Sample, lp::json\), got 0; "
                                               r"its signature: void put\(ns::Sample, lp::json\)"):
            proxy.put()
        got = proxy.get()
        self.assertEqual(got["pair"], (1, "a"))  # a tuple, as the schema says
        self.assertEqual(list(got["values"]), [1.0, 2.0])
        if lp.have_numpy():
            self.assertEqual(str(got["values"].dtype), "float32")
        self.assertEqual(got["extra"], 1)
        self.assertEqual(len(self.sent), 2)  # nothing went for the refused calls

    def test_a_malformed_schema_is_a_protocol_error(self):
        bad = method_entry("f", [{"kind": "integer", "bits": 12, "signed": True}], {"kind": "void"})

        def script(peer):
            while peer.read_request() is not None:
                peer.send(reply(200, "application/json", json.dumps(describe_reply("fake", [bad]))))
        node = FakeNode(script)
        self.addCleanup(node.close)
        with self.assertRaisesRegex(lp.ProtocolError, "a method in the describe reply is malformed: "
                                                      "an integer schema needs bits 8, 16, 32 or 64"):
            lp.connect(node.url, secret="s3cret", format="json")


if __name__ == "__main__":
    unittest.main()
