"""cbor2 and numpy, when they are installed and not hidden.

The client works with the standard library alone (JSON, lists); with cbor2 it
speaks CBOR, with numpy typed arrays become ndarrays. Setting
LP_PYTHON_NO_CBOR=1 or LP_PYTHON_NO_NUMPY=1 makes the client act as if the
package were missing, so the plain path can be tested on a machine that has
both (tests/python registers a meson test that runs that way).
"""

import os


def _hidden(variable):
    return os.environ.get(variable, "") not in ("", "0")


cbor2 = None
if not _hidden("LP_PYTHON_NO_CBOR"):
    try:
        import cbor2
    except ImportError:
        cbor2 = None

numpy = None
if not _hidden("LP_PYTHON_NO_NUMPY"):
    try:
        import numpy
    except ImportError:
        numpy = None


def have_cbor():
    return cbor2 is not None


def have_numpy():
    return numpy is not None
