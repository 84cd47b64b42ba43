#!/usr/bin/env python3
"""Writes the Python package's reference from its docstrings (Sphinx's
autodoc) and fails unless every public name is documented.

    tools/python_reference.py [OUT]    # OUT/html/index.html; default build/python-reference

The public surface is what each package of python/ lists in `__all__`
(launchpad_client/__init__.py, in sections that its comments name), and
the public modules among those (launchpad_client.metrics, with their own
`__all__`); the modules whose names start with an underscore are the
package's own. Three checks, each of which fails the run:
  1. Sphinx (Debian's python3-sphinx) warns of nothing, with every warning
     an error: a docstring that is not valid reStructuredText, a name
     autodoc cannot import;
  2. every public name has a docstring: each function, class, public
     module and type alias, and each public method and property of a
     public class;
  3. check 2 still finds an undocumented name of every kind, in a module
     made for it.

Exits 77 (skipped) without Sphinx, unless LP_REQUIRE_SPHINX is set (as
.ci/run does): then a missing Sphinx fails.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / "python"

CONF = '''\
project = "launchpad_client"
copyright = "the Launchpad for C++ authors"
release = version = {version!r}
extensions = ["sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
add_module_names = False
html_theme = "alabaster"
html_static_path = []
'''

# A module with one undocumented name of each kind, beside documented ones
# that must not be reported: what check 3 expects check 2 to report.
CANARY = '''\
"""Documented."""
from typing import Annotated, TypeAlias

__all__ = ["undocumented_function", "documented_function", "Undocumented", "Documented",
           "undocumented_alias", "documented_alias"]


def undocumented_function(): pass


def documented_function():
    """Documented."""


class Undocumented:
    pass


class Documented:
    """Documented."""

    def undocumented_method(self): pass

    def documented_method(self):
        """Documented."""

    @property
    def undocumented_property(self): return 1

    def _private(self): pass


undocumented_alias: TypeAlias = Annotated[int, 8]
documented_alias: TypeAlias = Annotated[int, 16]
"""Documented."""
'''
CANARY_EXPECTED = {"canary.undocumented_function", "canary.Undocumented",
                   "canary.Documented.undocumented_method",
                   "canary.Documented.undocumented_property", "canary.undocumented_alias"}


def packages() -> list[str]:
    return sorted(p.parent.name for p in PYTHON.glob("*/__init__.py"))


def sections(package: str) -> list[tuple[str, list[str]]]:
    """The package's `__all__` in its sections: the comment above a run of
    names is its heading."""
    tree = ast.parse((PYTHON / package / "__init__.py").read_text(encoding="utf-8"))
    lines = (PYTHON / package / "__init__.py").read_text(encoding="utf-8").splitlines()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            out: list[tuple[str, list[str]]] = []
            heading = "Names"
            for line in lines[node.lineno:node.end_lineno]:
                text = line.strip()
                if text.startswith("#"):
                    heading = text.lstrip("# ").rstrip(".")
                    out.append((heading, []))
                    continue
                names = [part.strip().strip('"\'') for part in text.split(",")]
                names = [n for n in names if n and n not in ("]", "[")]
                if names and not out:
                    out.append((heading, []))
                out[-1][1].extend(names)
            return [(h, names) for h, names in out if names]
    raise SystemExit(f"python_reference.py: {package}/__init__.py has no __all__")


def attribute_docstring(module: types.ModuleType, name: str) -> str | None:
    """The string right after `name = ...` at the top of `module`'s source
    (how Sphinx documents a module's data)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return None
    body = tree.body
    for i, node in enumerate(body):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == name and i + 1 < len(body):
            after = body[i + 1]
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and \
                    isinstance(after.value.value, str):
                return after.value.value
    return None


def defining_module(package: types.ModuleType, name: str) -> types.ModuleType:
    """The module that defines a re-exported data name: the one whose source
    assigns it (`from ._x import name` in the package)."""
    tree = ast.parse(inspect.getsource(package))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return importlib.import_module("." * node.level + (node.module or ""),
                                           package.__name__)
    return package


def undocumented(module: types.ModuleType, names: list[str]) -> list[str]:
    """The names in `names` of `module` (and the public methods and
    properties of its classes) that have no docstring."""
    missing = []
    for name in names:
        value = getattr(module, name)
        where = f"{module.__name__}.{name}"
        if isinstance(value, types.ModuleType):
            if not (value.__doc__ or "").strip():
                missing.append(where)
            missing += undocumented(value, list(getattr(value, "__all__", [])))
        elif inspect.isclass(value) or inspect.isfunction(value):
            if not (inspect.getdoc(value) or "").strip() or (
                    inspect.isclass(value) and value.__doc__ is None):
                missing.append(where)
            if inspect.isclass(value):
                for member, attribute in vars(value).items():
                    if member.startswith("_"):
                        continue
                    function = attribute.fget if isinstance(attribute, property) else attribute
                    if callable(function) and not (getattr(function, "__doc__", None) or "").strip():
                        missing.append(f"{where}.{member}")
        elif not (attribute_docstring(defining_module(module, name), name) or "").strip():
            missing.append(where)
    return missing


def index_text(package: str) -> str:
    module = importlib.import_module(package)
    title = f"{package} {module.__dict__.get('__version__', '')}".strip()
    out = [title, "=" * len(title), "", f".. automodule:: {package}", "   :no-members:", ""]
    for heading, names in sections(package):
        out += [heading, "-" * len(heading), "", f".. currentmodule:: {package}", ""]
        for name in names:
            value = getattr(module, name)
            if isinstance(value, types.ModuleType):
                out += [f".. automodule:: {value.__name__}", "   :members:", ""]
            elif inspect.isclass(value):
                out += [f".. autoclass:: {name}", "   :members:", ""]
            elif inspect.isfunction(value):
                out += [f".. autofunction:: {name}", ""]
            else:
                doc = attribute_docstring(defining_module(module, name), name) or ""
                shown = repr(value).replace("typing.", "")
                out += [f".. py:data:: {name}", f"   :value: {shown}", ""]
                out += ["   " + line for line in inspect.cleandoc(doc).splitlines()] + [""]
    return "\n".join(out)


def check_canary() -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "canary.py").write_text(CANARY)
        sys.path.insert(0, directory)
        try:
            canary = importlib.import_module("canary")
            found = set(undocumented(canary, list(canary.__all__)))
        finally:
            sys.path.remove(directory)
            sys.modules.pop("canary", None)
    if found != CANARY_EXPECTED:
        return [f"the docstring check no longer finds what it should in its canary: it found "
                f"{sorted(found)}, not {sorted(CANARY_EXPECTED)}"]
    return []


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "build" / "python-reference"
    sys.path.insert(0, str(PYTHON))
    problems = check_canary()
    for package in packages():
        module = importlib.import_module(package)
        problems += [f"{name} has no docstring: document it where it is defined"
                     for name in undocumented(module, list(module.__all__))]
    if shutil.which("sphinx-build") is None and importlib.util.find_spec("sphinx") is None:
        message = f"no Sphinx for {sys.executable} (apt-get install python3-sphinx)"
        if os.environ.get("LP_REQUIRE_SPHINX"):
            problems.append(message + "; LP_REQUIRE_SPHINX is set")
        elif not problems:
            print(f"SKIP: {message}")
            return 77
    else:
        with tempfile.TemporaryDirectory() as source:
            version = importlib.import_module(packages()[0]).__dict__.get("__version__", "")
            Path(source, "conf.py").write_text(CONF.format(version=version))
            pages = []
            for package in packages():
                Path(source, f"{package}.rst").write_text(index_text(package))
                pages.append(package)
            Path(source, "index.rst").write_text(
                "Python reference\n================\n\n.. toctree::\n\n"
                + "".join(f"   {page}\n" for page in pages))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(PYTHON)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])),
                "PYTHONDONTWRITEBYTECODE": "1"}
            run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
                                  "-q", "-E", "-d", str(Path(source, ".doctrees")), source,
                                  str(out / "html")], env=env, capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("Sphinx warned (every warning an error):\n" + run.stderr + run.stdout)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"python reference: {out / 'html' / 'index.html'}; every public name documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
