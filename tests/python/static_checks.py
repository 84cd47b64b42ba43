#!/usr/bin/env python3
"""The Python package's checks that run none of it: its types.

1. mypy (Debian's python3-mypy), with python/pyproject.toml's settings,
   finds nothing in launchpad_client: every function annotated, but in the
   modules pyproject.toml lists for the package's relayout (issue 52).
2. Every public name a user reaches (launchpad_client's __all__, and
   metrics') is annotated: each function's parameters and result, each
   public method's and property's of a public class. mypy cannot say this
   of the modules it is told to pass over, so this reads the objects.
3. The package ships a py.typed, so that a user's mypy reads its hints.

Exits 77 (skipped) without mypy, unless LP_REQUIRE_MYPY is set (as .ci/run
does); exits 1 naming each problem.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
PYTHON = ROOT / "python"
PACKAGE = "launchpad_client"
# Modules whose __all__ is public surface, as `lp.metrics.counter`.
PUBLIC_MODULES = (PACKAGE, f"{PACKAGE}.metrics")


def mypy_problems() -> list[str] | None:
    """What mypy finds; None without mypy."""
    if importlib.util.find_spec("mypy") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="lp-mypy-") as cache:
        run = subprocess.run([sys.executable, "-m", "mypy", "--config-file",
                              str(PYTHON / "pyproject.toml"), "--cache-dir", cache, "-p", PACKAGE],
                             cwd=PYTHON, capture_output=True, text=True)
    if run.returncode != 0:
        return ["mypy (python/pyproject.toml's settings) found:\n" + run.stdout + run.stderr]
    print(run.stdout.strip())
    return []


def unannotated(function: Any, name: str) -> list[str]:
    """The parameters and result of `function` that have no annotation."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return []  # a builtin, or a class without its own __init__
    missing = [f"parameter {p.name}" for i, p in enumerate(signature.parameters.values())
               if p.annotation is inspect.Parameter.empty
               and not (i == 0 and p.name in ("self", "cls"))]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("its result")
    return [f"{name}: no annotation for {what}" for what in missing]


def public_api_problems() -> list[str]:
    sys.path.insert(0, str(PYTHON))
    problems = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            where = f"{module_name}.{name}"
            if inspect.isfunction(value):
                problems += unannotated(value, where)
            elif inspect.isclass(value) and value.__module__.startswith(PACKAGE):
                if "__init__" in vars(value):
                    problems += unannotated(value.__init__, f"{where}.__init__")
                for member_name, member in vars(value).items():
                    if member_name.startswith("_") and member_name not in (
                            "__call__", "__getitem__", "__enter__", "__exit__"):
                        continue
                    if isinstance(member, property):
                        problems += unannotated(member.fget, f"{where}.{member_name}")
                    elif inspect.isfunction(member):
                        problems += unannotated(member, f"{where}.{member_name}")
    return problems


def main() -> int:
    problems = public_api_problems()
    if not (PYTHON / PACKAGE / "py.typed").is_file():
        problems.append(f"python/{PACKAGE} has no py.typed: a user's mypy would not read its hints")
    typed = mypy_problems()
    if typed is None:
        message = f"no mypy for {sys.executable} (apt-get install python3-mypy)"
        if os.environ.get("LP_REQUIRE_MYPY"):
            problems.append(message + "; LP_REQUIRE_MYPY is set")
        elif not problems:
            print(f"SKIP: {message}")
            return 77
    else:
        problems += typed
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"static checks: {PACKAGE} typed (mypy clean), its public names annotated, py.typed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
