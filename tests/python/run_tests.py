"""Runs the Python client's unittest suite for `meson test` (tests/python).

Exits 77 (meson's "skipped") with the reason when something the suite needs
is missing: Python 3.11, the programs it launches (their paths come from
meson in LP_WIRE_TYPES_PROGRAM and LP_EXAMPLE_ACTOR_LEARNER), or a package
that LP_PYTHON_REQUIRE names (the full test wants cbor2 and numpy; the
JSON-only test hides them with LP_PYTHON_NO_CBOR / LP_PYTHON_NO_NUMPY).
"""

import os
import sys
import unittest

SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def main():
    if sys.version_info < (3, 11):
        skip(f"the client needs Python 3.11, this is {sys.version.split()[0]} ({sys.executable})")
    for variable in ("LP_WIRE_TYPES_PROGRAM", "LP_EXAMPLE_ACTOR_LEARNER"):
        path = os.environ.get(variable)
        if not path or not os.access(path, os.X_OK):
            skip(f"{variable} does not name a built program ({path!r}); run through `meson test`")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import launchpad_client as lp  # from PYTHONPATH (meson sets it to python/)

    required = [p for p in os.environ.get("LP_PYTHON_REQUIRE", "").split(",") if p]
    have = {"cbor2": lp.have_cbor(), "numpy": lp.have_numpy()}
    for package in required:
        if not have.get(package):
            skip(f"{package} is not installed for {sys.executable} "
                 f"(apt-get install python3-{package}); the JSON-only test covers the rest")
    print(f"launchpad_client from {os.path.dirname(lp.__file__)}; "
          f"cbor2: {have['cbor2']}, numpy: {have['numpy']}; python {sys.version.split()[0]}",
          flush=True)
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
