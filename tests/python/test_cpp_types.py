"""Reading C++ spellings from describe (g++'s and clang++'s), without a node."""

import unittest

from launchpad_client import cpp_types as t


class Spellings(unittest.TestCase):
    def kind(self, spelling):
        return type(t.parse_type(spelling)).__name__

    def test_numbers(self):
        for spelling, bits, signed in [
            ("signed char", 8, True), ("unsigned char", 8, False), ("short int", 16, True),
            ("short", 16, True), ("short unsigned int", 16, False), ("unsigned short", 16, False),
            ("int", 32, True), ("unsigned int", 32, False), ("unsigned", 32, False),
            ("long int", 64, True), ("long", 64, True), ("long unsigned int", 64, False),
            ("unsigned long", 64, False), ("long long int", 64, True),
            ("long long unsigned int", 64, False), ("std::int64_t", 64, True), ("size_t", 64, False),
        ]:
            with self.subTest(spelling):
                parsed = t.parse_type(spelling)
                self.assertIsInstance(parsed, t.Integer)
                self.assertEqual((parsed.element.size * 8, parsed.element.kind == "i"), (bits, signed))
        self.assertEqual(t.parse_type("float").element.name(), "float32")
        self.assertEqual(t.parse_type("double").element.name(), "float64")
        self.assertIsNone(t.parse_type("long double").element)
        self.assertEqual(self.kind("bool"), "Bool")

    def test_templates(self):
        cases = {
            "std::string": "String",
            "std::__cxx11::basic_string<char>": "String",
            "std::vector<float>": "Sequence",
            "std::vector<std::string, std::allocator<std::string > >": "Sequence",
            "std::vector<std::vector<int> >": "Sequence",
            "std::__cxx11::list<int>": "Opaque",  # refused by C++ services: never described
            "std::set<int>": "Sequence",
            "std::array<double, 3>": "FixedArray",
            "std::map<std::string, double>": "Map",
            "std::unordered_map<std::string, int>": "Map",
            "std::unordered_map<int, std::string >": "Opaque",
            "std::pair<int, std::string >": "Tuple",
            "std::tuple<int, double, std::string >": "Tuple",
            "std::optional<ns::Inner>": "Optional",
            "lp::tensor<unsigned char>": "Tensor",
            "ns::Point": "Opaque",
            "Outer<int>::Inner": "Opaque",
            "int*": "Opaque",
            "std::variant<int, float>": "Opaque",
            "lp::tensor<bool>": "Opaque",
            "void": "Void",
        }
        for spelling, kind in cases.items():
            with self.subTest(spelling):
                self.assertEqual(self.kind(spelling), kind)
        self.assertTrue(t.parse_type("std::vector<float>").typed)
        self.assertTrue(t.parse_type("std::vector<long unsigned int>").typed)
        self.assertFalse(t.parse_type("std::vector<bool>").typed)
        self.assertFalse(t.parse_type("std::vector<float, my::allocator<float> >").typed)

    def test_signatures(self):
        params, result = t.parse_signature("add", 2, "long int add(long int, std::map<std::string, int >)")
        self.assertEqual([p.name for p in params], ["long int", "std::map<std::string, int>"])
        self.assertEqual(result.name, "long int")
        params, result = t.parse_signature("run", 0, "void run()")
        self.assertEqual((params, type(result).__name__), ([], "Void"))
        # What does not parse checks nothing, and never fails the call.
        params, result = t.parse_signature("odd", 1, "something odd")
        self.assertEqual([type(p).__name__ for p in params], ["Opaque"])
        self.assertEqual(params[0].to_wire({"any": (1, 2)}, "x"), {"any": [1, 2]})

    def test_map_keys_are_strings(self):
        m = t.parse_type("std::map<std::string, int>")
        self.assertEqual(m.to_wire({"b": 2, "a": 1}, "argument 1"), {"b": 2, "a": 1})
        with self.assertRaisesRegex(TypeError, "argument 1, a key"):
            m.to_wire({1: 2}, "argument 1")


if __name__ == "__main__":
    unittest.main()
