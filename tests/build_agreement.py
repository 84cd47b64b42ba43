#!/usr/bin/env python3
"""Checks that CMakeLists.txt compiles the library as meson.build does.

Both read src/compiled_part.txt, yet either could read it wrong, add a
definition of its own or differ in a dependency's (nlohmann_json's CMake
package may define JSON_DIAGNOSTICS, which changes the size of its values,
where its pkg-config file defines nothing). So this configures, in
a temporary directory and without building, a CMake project that takes the
repository with add_subdirectory() and compiles examples/counter/main.cpp
against launchpad::launchpad, as the meson build compiles it against
dependency('launchpad'), and compares the two compile_commands.json: for the
library and for that user's file, the sources, the -D definitions and the -I
directories inside the repository must be the same.

Usage: build_agreement.py MESON_BUILD_ROOT. Exits 77 (skipped) without cmake.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Meson defines it for every file of every project on Linux, and launchpad.pc
# does not pass it on either: no user of the library sees it.
MESON_ONLY = {"_FILE_OFFSET_BITS=64"}
# Each target: where meson and CMake put its object files, and the include
# directories meson adds of its own (a meson.build's directory, for its
# targets: examples/ for the examples, none for the library).
TARGETS = {"the library": ("/liblaunchpad.a.p/", "/CMakeFiles/launchpad.dir/", set()),
           "examples/counter/main.cpp": ("/examples/counter.p/", "/CMakeFiles/counter.dir/", {"examples"})}
PROJECT = """cmake_minimum_required(VERSION 3.20)
project(build_agreement LANGUAGES CXX)
add_subdirectory("{root}" launchpad)
add_executable(counter "{root}/examples/counter/main.cpp")
target_link_libraries(counter PRIVATE launchpad::launchpad)
"""


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def flags(entry: dict, outside: list[Path]) -> dict:
    """What one compile_commands.json entry compiles, and with which flags."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    where = Path(entry["directory"])
    found = {"sources": set(), "definitions": set(), "include directories": set()}
    found["sources"].add(shown((where / entry["file"]).resolve()))
    for i, arg in enumerate(args):
        for flag, kind in (("-D", "definitions"), ("-I", "include directories"), ("-isystem", "include directories")):
            if arg.startswith(flag):
                value = arg[len(flag):] or args[i + 1]
                if kind == "definitions":
                    if value not in MESON_ONLY:
                        found[kind].add(value)
                else:
                    path = (where / value).resolve()
                    # Only the repository's own: each build adds its private
                    # directories, and meson also names /usr/include.
                    if path.is_relative_to(ROOT) and not any(path.is_relative_to(o) for o in outside):
                        found[kind].add(shown(path))
    return found


def collect(compile_commands: Path, side: int, outside: list[Path]) -> dict:
    """The flags of each of TARGETS in one build's compile_commands.json."""
    result = {}
    for entry in json.loads(compile_commands.read_text()):
        args = entry.get("arguments") or shlex.split(entry["command"])
        output = entry.get("output") or (args[args.index("-o") + 1] if "-o" in args else "")
        output = "/" + os.path.normpath(Path(entry["directory"]) / output).lstrip("/")
        for name, marks in TARGETS.items():
            if marks[side] in output:
                into = result.setdefault(name, {})
                for kind, values in flags(entry, outside).items():
                    into.setdefault(kind, set()).update(values)
                if side == 0:
                    into["include directories"] -= marks[2]
    return result


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    meson_root = Path(sys.argv[1]).resolve()
    cmake = shutil.which("cmake")
    if not cmake:
        print("skipped: cmake is not installed (Debian: apt-get install cmake)")
        return 77
    meson_commands = meson_root / "compile_commands.json"
    if not meson_commands.is_file():
        print(f"{meson_commands} is missing: give the meson build directory", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lp-build-agreement.") as tmp:
        source, build = Path(tmp, "source"), Path(tmp, "build")
        source.mkdir()
        (source / "CMakeLists.txt").write_text(PROJECT.format(root=ROOT.as_posix()))
        run = subprocess.run([cmake, "-S", str(source), "-B", str(build), "-G", "Ninja",
                              "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        if run.returncode != 0:
            print(run.stdout)
            print("configuring CMakeLists.txt failed", file=sys.stderr)
            return 1
        outside = [meson_root, build.resolve()]
        builds = {"meson": collect(meson_commands, 0, outside),
                  "cmake": collect(build / "compile_commands.json", 1, outside)}
    failures = 0
    for name in TARGETS:
        missing = [side for side, found in builds.items() if name not in found]
        for side in missing:
            print(f"{side}: no compile command for {name} (has its target moved?)")
        failures += len(missing)
        if missing:
            continue
        meson, cmake_side = builds["meson"][name], builds["cmake"][name]
        for kind in meson:
            if meson[kind] != cmake_side[kind]:
                failures += 1
                print(f"{name}: the builds disagree on {kind}:\n"
                      f"  meson only: {sorted(meson[kind] - cmake_side[kind])}\n"
                      f"  cmake only: {sorted(cmake_side[kind] - meson[kind])}")
            else:
                print(f"{name}: {kind} agree: {sorted(meson[kind])}")
    if failures:
        print("meson.build and CMakeLists.txt must compile the same (src/compiled_part.txt).")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
