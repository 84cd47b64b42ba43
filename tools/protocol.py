#!/usr/bin/env python3
"""Write the protocol's names, from the one file that holds them, for C++ and Python.

The paths, headers, error codes, schema kinds, typed-array tags, checkpoint
header, metric families, run-directory files, a Python node's spec keys,
control lines and exit statuses, and the version are spoken by the C++
library and by the Python package alike. They are written once, in
include/launchpad/detail/protocol/protocol.toml; this tool writes from it

    include/launchpad/detail/protocol/constants.hpp   lp::detail::protocol::<table>::<key>
    python/launchpad_client/_protocol.py              <TABLE>_<KEY>

Both are checked in, as single_include/ is: a user's build reads headers
and runs no tool of ours. `--check` (the meson test protocol_fresh, suite
docs) fails while a written file differs from what this tool would write:

    python3 tools/protocol.py            # regenerate
    python3 tools/protocol.py --check    # exit 1 if a written file is stale

A comment above a key, or after its value, goes with it into both files.
A table's `scan` says how tests/protocol_spelled_once.py looks for its
values written by hand; its `row`, that each value is a row of named fields
(a struct in C++, a NamedTuple in Python).
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE = "include/launchpad/detail/protocol/protocol.toml"
CPP = "include/launchpad/detail/protocol/constants.hpp"
PYTHON = "python/launchpad_client/_protocol.py"
REGEN_COMMAND = "python3 tools/protocol.py"
SCANS = ("text", "literal", "none")
META = ("scan", "row")
# C++'s keywords and the names a header must not take: a key that is one
# is renamed in the .toml (kind's "record" for "struct"), not mangled here.
CPP_RESERVED = set("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class co_await co_return co_yield compl concept const const_cast consteval constexpr
constinit continue decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not
not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires
return short signed sizeof static static_assert static_cast struct switch template this
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq module import
""".split())
NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass
class Constant:
    key: str
    value: Any
    comment: list[str]  # the lines above it
    after: str | None  # the comment after its value
    scan: str


@dataclass
class Table:
    name: str
    comment: list[str]
    constants: list[Constant] = field(default_factory=list)
    row_type: str | None = None
    row_fields: list[str] | None = None
    row_scanned: list[str] | None = None  # the fields the scan looks for


@dataclass
class Protocol:
    top: list[Constant]
    tables: list[Table]

    def every_constant(self) -> list[tuple[str | None, Constant]]:
        return [(None, c) for c in self.top] + [(t.name, c) for t in self.tables for c in t.constants]


def _trailing_comment(line: str) -> tuple[str, str | None]:
    """A line without its comment, and the comment: a # outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[:i].rstrip(), line[i + 1:].strip()
    return line, None


Comments = dict[tuple[str | None, str], tuple[list[str], str | None]]


def _comments(text: str) -> tuple[Comments, dict[str, list[str]]]:
    """The comments of each key, by (table, key), and of each table: the
    lines of # right above it (after a blank line or a header, a new block),
    and what follows its value on its line."""
    keys: Comments = {}
    tables: dict[str, list[str]] = {}
    table: str | None = None
    block: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            block = []
        elif line.startswith("#"):
            block.append(line[1:].strip() if line != "#" else "")
        elif line.startswith("["):
            table = line.strip("[]").strip()
            tables[table] = block
            block = []
        else:
            code, after = _trailing_comment(line)
            key = code.split("=", 1)[0].strip().strip('"')
            keys[(table, key)] = (block, after)
            block = []
    return keys, tables


def _scan_of(table: str, setting: Any, key: str) -> str:
    if isinstance(setting, dict):
        mode = setting.get(key, setting.get("*"))
    else:
        mode = setting
    if mode not in SCANS:
        raise SystemExit(f"protocol.py: [{table}]'s scan gives {key} {mode!r}; it is one of {SCANS}")
    return mode


def _check_value(where: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float, list)):
        raise SystemExit(f"protocol.py: {where} is a {type(value).__name__}; a value is a string, "
                         "a number, or a list of numbers or of a row's fields")


def read(path: Path) -> Protocol:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    key_comments, table_comments = _comments(text)
    top: list[Constant] = []
    tables: list[Table] = []
    for name, value in data.items():
        if not NAME.match(name) or name in CPP_RESERVED:
            raise SystemExit(f"protocol.py: {name!r} cannot be a name in C++ and Python; rename it")
        if not isinstance(value, dict):
            _check_value(name, value)
            top.append(Constant(name, value, *key_comments.get((None, name), ([], None)), "literal"))
            continue
        table = Table(name, table_comments.get(name, []))
        row = value.get("row")
        if row is not None:
            table.row_type, table.row_fields = row["type"], list(row["fields"])
            table.row_scanned = list(row.get("scanned", row["fields"]))
        for key, item in value.items():
            if key in META:
                continue
            if not NAME.match(key) or key in CPP_RESERVED:
                raise SystemExit(f"protocol.py: [{name}] {key!r} cannot be a name in C++ and Python; "
                                 "rename it (the value may stay what it is)")
            _check_value(f"[{name}] {key}", item)
            if table.row_fields is not None and (
                    not isinstance(item, list) or len(item) != len(table.row_fields)
                    or not all(isinstance(f, str) for f in item)):
                raise SystemExit(f"protocol.py: [{name}] {key} is not a row of {table.row_fields}")
            table.constants.append(Constant(key, item, *key_comments.get((name, key), ([], None)),
                                            _scan_of(name, value.get("scan", "none"), key)))
        tables.append(table)
    return Protocol(top, tables)


# --- C++. --------------------------------------------------------------------

def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _cpp_number(value: int | float) -> str:
    if isinstance(value, float):
        return repr(value)
    return f"0x{value:x}" if value > 0xFFFF else str(value)


def _cpp_comment(lines: list[str], indent: str = "") -> list[str]:
    return [(f"{indent}// {line}").rstrip() for line in lines]


def _cpp_constant(constant: Constant, table: Table | None) -> list[str]:
    value, key = constant.value, constant.key
    if table is not None and table.row_type is not None:
        # A row's fields one to a line: help texts are long.
        fields = [f"    {_cpp_string(f)}," for f in value]
        fields[-1] = fields[-1][:-1] + "};"
        lines = [f"inline constexpr {table.row_type} {key}{{", *fields]
    elif isinstance(value, str):
        lines = [f"inline constexpr char {key}[] = {_cpp_string(value)};"]
    elif isinstance(value, list):
        element = "double" if any(isinstance(v, float) for v in value) else "int"
        numbers = ", ".join(_cpp_number(float(v) if element == "double" else v) for v in value)
        lines = [f"inline constexpr std::array<{element}, {len(value)}> {key}{{", f"    {numbers}}};"]
    elif isinstance(value, int) and value > 0x7FFFFFFF:
        lines = [f"inline constexpr std::uint64_t {key} = {_cpp_number(value)}ULL;"]
    elif isinstance(value, int):
        lines = [f"inline constexpr int {key} = {_cpp_number(value)};"]
    else:
        lines = [f"inline constexpr double {key} = {_cpp_number(value)};"]
    above = list(constant.comment)
    if constant.after:
        if len(lines) == 1 and len(lines[0]) + len(constant.after) + 5 <= 90:
            lines[0] += f"  // {constant.after}"
        else:
            above.append(constant.after[0].upper() + constant.after[1:])
    return _cpp_comment(above) + lines


def cpp_text(protocol: Protocol) -> str:
    name = Path(SOURCE).name
    version = next(c.value for c in protocol.top if c.key == "version")
    major, minor, patch = version.split(".")
    out = [
        "#pragma once",
        "",
        f"// Generated by tools/protocol.py from {name} beside it: do not edit.",
        f"// Edit {name} and run `{REGEN_COMMAND}`; its --check (the meson",
        "// test protocol_fresh, suite docs) fails while this file is stale. The",
        "// same names are python/launchpad_client/_protocol.py's, in capitals.",
        "",
        "#include <array>",
        "#include <cstdint>",
        "",
        "// The version's parts, for <launchpad/version.hpp>'s LP_VERSION_* and #if.",
        f"#define LP_DETAIL_VERSION_MAJOR {int(major)}",
        f"#define LP_DETAIL_VERSION_MINOR {int(minor)}",
        f"#define LP_DETAIL_VERSION_PATCH {int(patch)}",
        "",
        "namespace lp::detail::protocol {",
    ]
    for constant in protocol.top:
        out += [""] + _cpp_constant(constant, None)
    for table in protocol.tables:
        out += [""] + _cpp_comment(table.comment)
        out.append(f"namespace {table.name} {{")
        if table.row_type is not None:
            out.append(f"struct {table.row_type} {{")
            out += [f"  const char* {f};" for f in table.row_fields or []]
            out.append("};")
        for constant in table.constants:
            out += _cpp_constant(constant, table)
        out.append(f"}}  // namespace {table.name}")
    out += ["", "}  // namespace lp::detail::protocol", ""]
    return "\n".join(out)


# --- Python. -----------------------------------------------------------------

def python_name(table: str | None, key: str) -> str:
    return (f"{table}_{key}" if table else key).upper()


def _row_class(row_type: str) -> str:
    return "".join(part.capitalize() for part in row_type.split("_"))


def _python_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _python_value(value: Any, table: Table | None) -> str:
    if table is not None and table.row_type is not None:
        fields = "".join(f"\n    {_python_string(f)}," for f in value)
        return f"{_row_class(table.row_type)}({fields}\n)"
    if isinstance(value, list):
        return "(" + ", ".join(repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, str):
        return _python_string(value)
    if isinstance(value, int) and value > 0xFFFF:
        return f"0x{value:x}"
    return repr(value)


def _python_constant(constant: Constant, table: Table | None) -> list[str]:
    name = python_name(table.name if table else None, constant.key)
    if keyword.iskeyword(name):
        raise SystemExit(f"protocol.py: {name} is a Python keyword")
    line = f"{name}: Final = {_python_value(constant.value, table)}"
    above = list(constant.comment)
    if constant.after:
        if "\n" not in line and len(line) + len(constant.after) + 4 <= 100:
            line += f"  # {constant.after}"
        else:
            above.append(constant.after[0].upper() + constant.after[1:])
    return [f"# {text}".rstrip() for text in above] + [line]


def python_text(protocol: Protocol) -> str:
    out = [
        f'"""The protocol\'s names, as {Path(SOURCE).name} writes them (docs/protocol.md).',
        "",
        f"Generated by tools/protocol.py from {SOURCE}:",
        f"do not edit. Edit that file and run `{REGEN_COMMAND}`; its --check (the",
        "meson test protocol_fresh, suite docs) fails while this file is stale. The",
        "C++ library reads the same names from constants.hpp beside it, as",
        "lp::detail::protocol::<table>::<key>.",
        '"""',
        "",
        "from typing import Final, NamedTuple",
    ]
    for table in protocol.tables:
        if table.row_type is not None:
            out += ["", "", f"class {_row_class(table.row_type)}(NamedTuple):",
                    f'    """A row of [{table.name}]."""', ""]
            out += [f"    {f}: str" for f in table.row_fields or []]
    out.append("")
    for constant in protocol.top:
        out += [""] + _python_constant(constant, None)
    for table in protocol.tables:
        out += ["", ""] + [f"# {line}".rstrip() for line in table.comment]
        out.append(f"# [{table.name}]")
        for constant in table.constants:
            out += _python_constant(constant, table)
    out.append("")
    return "\n".join(out)


def outputs() -> dict[str, str]:
    protocol = read(REPO_ROOT / SOURCE)
    return {CPP: cpp_text(protocol), PYTHON: python_text(protocol)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a written file is stale")
    args = parser.parse_args(argv)
    stale = 0
    for relative, wanted in outputs().items():
        path = REPO_ROOT / relative
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == wanted:
            continue
        if args.check:
            print(f"{relative} is stale: it does not say what {SOURCE} says. Run: {REGEN_COMMAND}")
            stale += 1
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {relative}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
