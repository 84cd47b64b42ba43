#!/usr/bin/env python3
"""The Python package's checks that run none of it: its types, and its
rooms.

1. mypy (Debian's python3-mypy), with python/pyproject.toml's settings,
   finds nothing in launchpad_client: every function of every module
   annotated.
2. Every public name a user reaches (launchpad_client's __all__, and that
   of its public modules) is annotated: each function's parameters and
   result, each public method's and property's of a public class, read
   from the objects as a user's mypy would meet them.
3. The package ships a py.typed, so that a user's mypy reads its hints.
4. launchpad_client keeps its rooms apart, as include/'s layers are
   (tests/include_rules.py): _wire/ (what both sides speak) imports no
   client and no node code, _client/ no node code, the private modules at
   the top only what is below them, and no private module imports the
   package's public surface (__init__.py), which only re-exports.

Exits 77 (skipped) without mypy, unless LP_REQUIRE_MYPY is set (as .ci/run
does); exits 1 naming each problem.
"""

from __future__ import annotations

import ast
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
PUBLIC_MODULES = (PACKAGE, f"{PACKAGE}.metrics", f"{PACKAGE}.hints", f"{PACKAGE}.server")
# A room (or a private module at the top), and the rooms and modules of the
# package it may import from; the public modules and _node/ may import any.
ROOMS = {
    "_protocol": set(),
    "_errors": set(),
    "_packages": {"_packages"},
    "_run_directory": {"_protocol"},
    "_tls": {"_protocol"},
    "_wire": {"_wire", "_protocol", "_packages"},
    "_client": {"_client", "_wire", "_protocol", "_packages", "_errors", "_run_directory", "_tls"},
}


def mypy_problems() -> list[str] | None:
    """What mypy finds; None without mypy."""
    if importlib.util.find_spec("mypy") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="lp-mypy-") as cache:
        run = subprocess.run([sys.executable, "-m", "mypy", "--config-file",
                              str(PYTHON / "pyproject.toml"), "--cache-dir", cache, "-p", PACKAGE,
                              # Launchpad's API on this runtime (docs/coming_from_launchpad.md)
                              "-p", "launchpad"],
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


def imported_rooms(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of the package's own modules, as
    launchpad_client.<first part>."""
    relative = path.relative_to(PYTHON / PACKAGE).with_suffix("")
    here = list(relative.parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                parts = base + (node.module.split(".") if node.module else [])
                if not parts:  # `from . import x` at the top: each name is a module
                    found += [(node.lineno, alias.name) for alias in node.names]
                else:
                    found.append((node.lineno, parts[0]))
            elif node.module and node.module.split(".")[0] == PACKAGE:
                parts = node.module.split(".")[1:]
                found.append((node.lineno, parts[0] if parts else "__init__"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    parts = alias.name.split(".")[1:]
                    found.append((node.lineno, parts[0] if parts else "__init__"))
    return found


def room_problems() -> list[str]:
    problems = []
    for path in sorted((PYTHON / PACKAGE).rglob("*.py")):
        relative = path.relative_to(PYTHON / PACKAGE)
        room = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        allowed = ROOMS.get(room)
        for line, module in imported_rooms(path):
            where = f"python/{PACKAGE}/{relative}:{line}"
            if module == "__init__" and relative.name != "__init__.py":
                problems.append(f"{where} imports the package's public surface; import the "
                                "private module that holds the name")
            elif allowed is not None and module not in allowed:
                problems.append(f"{where} imports {module}, which {room}/ may not: it imports only "
                                f"{', '.join(sorted(allowed))}")
    return problems


def main() -> int:
    problems = public_api_problems() + room_problems()
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
    print(f"static checks: {PACKAGE} typed (mypy clean), its public names annotated, py.typed, "
          "its rooms apart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
