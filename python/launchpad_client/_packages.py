"""cbor2 and numpy, when they are installed and not hidden.

The client works with the standard library alone (JSON, lists); with cbor2 it
speaks CBOR, with numpy typed arrays become ndarrays. Setting
LP_PYTHON_NO_CBOR=1 or LP_PYTHON_NO_NUMPY=1 makes the client act as if the
package were missing, so the plain path can be tested on a machine that has
both (tests/python registers a meson test that runs that way).

A package that is missing, not hidden, is most often installed for another
interpreter than the one running (a venv, pyenv): the first node made
warns, once, with what to install for this one (MissingPackageWarning).
"""

from __future__ import annotations

import importlib
import os
import sys
import types
import warnings
from typing import Any

_HIDING = {"cbor2": "LP_PYTHON_NO_CBOR", "numpy": "LP_PYTHON_NO_NUMPY"}


def _hidden(variable: str) -> bool:
    return os.environ.get(variable, "") not in ("", "0")


def _optional(name: str) -> Any:
    """The module, or None where it is missing or hidden. (Any: a module
    that may be None reads as its members to mypy only after a check every
    caller makes.)"""
    if _hidden(_HIDING[name]):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


cbor2: Any = _optional("cbor2")
numpy: Any = _optional("numpy")


def have_cbor() -> bool:
    """Whether calls go in CBOR: cbor2 is installed for this Python, and
    LP_PYTHON_NO_CBOR does not hide it."""
    return cbor2 is not None


def have_numpy() -> bool:
    """Whether typed arrays come back as numpy arrays: numpy is installed for
    this Python, and LP_PYTHON_NO_NUMPY does not hide it."""
    return numpy is not None


class MissingPackageWarning(UserWarning):
    """cbor2 or numpy is not installed for this interpreter: the client gets
    by without it (JSON, lists)."""


_CONSEQUENCES = {
    "cbor2": "calls go as JSON, which is slower and cannot carry NaN or infinities",
    "numpy": "vectors and tensors come back as lists, not numpy arrays",
}
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_warned = False


def _first_caller_outside() -> int:
    """The stacklevel, for warnings.warn in our caller, of the first frame
    outside this package: the user's line that made the node."""
    level = 2
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level


def warn_if_missing(format_chosen: bool) -> None:
    """Warns, the first time only, of each package that is missing and not
    hidden; of cbor2 only when the caller chose no format."""
    global _warned
    if _warned:
        return
    _warned = True
    missing = [name for name, module in (("cbor2", cbor2), ("numpy", numpy))
               if module is None and not _hidden(_HIDING[name])
               and not (name == "cbor2" and format_chosen)]
    if not missing:
        return
    python = sys.executable or "python3"
    apt = f"apt-get install {' '.join('python3-' + name for name in missing)}"
    # Debian's own Python refuses pip outside a venv.
    install = (apt if python.startswith("/usr/bin/") else
               f"{python} -m pip install {' '.join(missing)} (for Debian's /usr/bin/python3: {apt})")
    warnings.warn(
        f"launchpad_client: {' and '.join(missing)} not installed for this Python ({python}): "
        f"{'; '.join(_CONSEQUENCES[name] for name in missing)}. Install for this interpreter: "
        f"{install}, or set {' and '.join(_HIDING[name] + '=1' for name in missing)} to go on "
        "without, unwarned.",
        MissingPackageWarning, stacklevel=_first_caller_outside())
