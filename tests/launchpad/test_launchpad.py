"""Launchpad programs (programs.py) on lp-launchpad under local_mt and
local_mp: a hello world and consumer/producers with futures, Courier's
values and a lambda for a constructor argument. Each launch runs as its own
process, bounded in time, in a TMPDIR of its own that must be empty after
it (the description's directory, the launch's run directory)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH_TIMEOUT = 120  # seconds; a launch takes 1-3 s here


def launch(name, launch_type):
    """Runs programs.py NAME LAUNCH_TYPE; returns (exit status, its output,
    the result its last node wrote, what it left in its TMPDIR)."""
    scratch = tempfile.mkdtemp(prefix="lp-launchpad-test-")
    tmp = os.path.join(scratch, "tmp")
    os.mkdir(tmp)
    result_file = os.path.join(scratch, "result.json")
    try:
        done = subprocess.run(
            [sys.executable, os.path.join(HERE, "programs.py"), name, launch_type, result_file],
            env=dict(os.environ, TMPDIR=tmp), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=LAUNCH_TIMEOUT, text=True)
        result = None
        if os.path.exists(result_file):
            with open(result_file) as f:
                result = json.load(f)
        return done.returncode, done.stdout, result, sorted(os.listdir(tmp))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class LaunchpadPrograms(unittest.TestCase):
    def check_hello(self, launch_type):
        status, output, result, left = launch("hello", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(result, {"sync": "hello, world", "future": "hello, futures"}, output)
        self.assertEqual(left, [], output)

    def check_consumer_producers(self, launch_type):
        status, output, result, left = launch("consumer_producers", launch_type)
        self.assertEqual(status, 0, output)
        self.assertIsNotNone(result, output)
        # Producer 1's offset came from a lambda, 0's and 2's from a partial.
        self.assertEqual(result["work"], [1000, 101, 1002])
        echoed = [(e["type"], e["dtype"], e["value"]) for e in result["echo"]]
        self.assertEqual(echoed, [
            ("NoneType", None, None), ("bool", None, True), ("int", None, -7),
            ("float", None, 2.5), ("str", None, "text"), ("bytes", None, "00ff"),
            ("list", None, [1, [2, "three"]]), ("dict", None, {"a": 1, "b": [None, False]}),
            ("ndarray", "float32", [0.0, 1.0, 2.0, 3.0, 4.0]), ("ndarray", "int64", [1, -2]),
            ("uint8", None, 200)])
        self.assertEqual(result["kept"], [True] * 11)
        self.assertEqual(result["named"], [True, True])
        self.assertIn("RemoteError: producer/0.unsendable", result["unsendable"])
        self.assertIn("is of type object, which cannot cross the wire", result["unsendable"])
        self.assertIn("argument 1 of producer/0.echo is of type object", result["unsent"])
        self.assertEqual(left, [], output)

    def test_hello_local_mt(self):
        self.check_hello("local_mt")

    def test_hello_local_mp(self):
        self.check_hello("local_mp")

    def test_consumer_producers_local_mt(self):
        self.check_consumer_producers("local_mt")

    def test_consumer_producers_local_mp(self):
        self.check_consumer_producers("local_mp")

    def test_unknown_launch_type(self):
        status, output, _, left = launch("hello", "vertex_ai")
        self.assertNotEqual(status, 0)
        self.assertIn("'vertex_ai' is not a valid LaunchType", output)
        self.assertEqual(left, [])


class WithoutCloudpickle(unittest.TestCase):
    """A machine without cloudpickle imports launchpad and builds programs
    (its reference is written there); launch() says what to install."""

    def test_launch_names_the_package(self):
        script = (
            "import sys\n"
            "sys.modules['cloudpickle'] = None  # import cloudpickle now fails\n"
            "import launchpad as lp\n"
            "p = lp.Program('p')\n"
            "p.add_node(lp.PyNode(print, 'hi'), label='n')\n"
            "try:\n"
            "    lp.launch(p)\n"
            "except ImportError as e:\n"
            "    print('refused:', e)\n")
        done = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=LAUNCH_TIMEOUT, text=True)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertIn("refused: launchpad.launch() writes each node's definition with "
                      "cloudpickle", done.stdout)
        self.assertIn("apt-get install python3-cloudpickle", done.stdout)


if __name__ == "__main__":
    try:
        import cloudpickle  # noqa: F401  (launch() writes definitions with it)
    except ImportError:
        if os.environ.get("LP_REQUIRE_CLOUDPICKLE"):
            raise
        print("skipped: launchpad.launch() needs cloudpickle (apt-get install "
              "python3-cloudpickle)")
        sys.exit(77)
    unittest.main()
