"""An interpreter without cbor2 or numpy (a venv, pyenv's): the client gets
by with JSON and lists, and says so once, with what to install."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unittest

# Makes two nodes, with `sys.argv[1]` (comma-separated) impossible to import,
# and prints the warnings it got: category, message, file.
CLIENT = textwrap.dedent("""
    import json, sys, warnings
    for name in filter(None, sys.argv[1].split(",")):
        sys.modules[name] = None  # its import raises ImportError
    import launchpad_client as lp
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # Python's own once-per-line would hide a second one
        for _ in range(2):
            try:
                lp.connect("http://127.0.0.1:9", timeout=2)
            except lp.LaunchpadError:
                pass
    print(json.dumps([[w.category.__name__, str(w.message), w.filename] for w in caught]))
""")


def warnings_of(blocked, **variables):
    env = {k: v for k, v in os.environ.items() if k not in ("LP_PYTHON_NO_CBOR", "LP_PYTHON_NO_NUMPY")}
    env.update(variables)
    done = subprocess.run([sys.executable, "-c", CLIENT, ",".join(blocked)], env=env, capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"the client script failed:\n{done.stderr}")
    return json.loads(done.stdout)


def installed(name):
    return importlib.util.find_spec(name) is not None


class MissingPackages(unittest.TestCase):
    def test_without_both_one_warning_says_what_to_install(self):
        caught = warnings_of(["cbor2", "numpy"])
        self.assertEqual(len(caught), 1, caught)
        category, message, filename = caught[0]
        self.assertEqual(category, "MissingPackageWarning")
        self.assertIn(f"cbor2 and numpy not installed for this Python ({sys.executable})", message)
        self.assertIn("calls go as JSON", message)
        self.assertIn("come back as lists, not numpy arrays", message)
        if not sys.executable.startswith("/usr/bin/"):
            self.assertIn(f"{sys.executable} -m pip install cbor2 numpy", message)
        self.assertIn("apt-get install python3-cbor2 python3-numpy", message)
        self.assertEqual(filename, "<string>")  # the caller's line, not the client's

    def test_without_numpy_the_warning_names_numpy_alone(self):
        if not installed("cbor2"):
            self.skipTest(f"cbor2 is not installed for {sys.executable}")
        caught = warnings_of(["numpy"])
        self.assertEqual(len(caught), 1, caught)
        self.assertIn("launchpad_client: numpy not installed", caught[0][1])
        self.assertNotIn("cbor2", caught[0][1])

    def test_no_warning_with_both_or_when_hidden_on_purpose(self):
        if installed("cbor2") and installed("numpy"):
            self.assertEqual(warnings_of([]), [])
        self.assertEqual(warnings_of(["cbor2", "numpy"], LP_PYTHON_NO_CBOR="1", LP_PYTHON_NO_NUMPY="1"), [])


if __name__ == "__main__":
    unittest.main()
