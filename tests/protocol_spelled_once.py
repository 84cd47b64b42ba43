#!/usr/bin/env python3
"""Fails where the library's code spells a protocol value by hand.

The protocol's names are written once, in
include/launchpad/detail/protocol/protocol.toml (tools/protocol.py writes
them for C++ and for Python). This test reads every header under include/
and every module under python/, but the two files written from it, and
looks in their string literals (comments and docstrings are prose, and not
read) for each value, as its table's `scan` says:

  text      the value anywhere inside a literal, letters of either case
            ("/lp/v1/", "Lp-Deadline-Ms", "application/cbor", "lp_calls_total");
  literal   a literal that is the value and nothing else ("typed_array",
            "no_such_method", "args_file", "finished");
  none      not looked for (numbers, which the code names all the same).

A literal that happens to spell a value but means something else is listed
in NOT_THE_PROTOCOL with the reason, where a reader sees it. Exits 1 and
names each file, line, value and the name to use instead.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import protocol  # noqa: E402  (tools/protocol.py: the reader of the .toml)

GENERATED = {protocol.CPP, protocol.PYTHON, "include/launchpad/detail/status/status_page.hpp"}

# (file, value): why that literal is not the protocol's value.
NOT_THE_PROTOCOL: dict[tuple[str, str], str] = {
    ("include/launchpad/detail/host/rendezvous.hpp", "stopping"):
        "a field of the launcher's rendezvous replies ({\"stopping\": true}), not an error code",
    ("include/launchpad/detail/reflect/signature.hpp", "void"):
        "C++'s spelling of the type, for messages, not the schema's kind",
    ("include/launchpad/detail/wire/schema.hpp", "void"):
        "C++'s spelling of the type (the schema's \"type\"), not its kind",
    ("include/launchpad/detail/serve/impl/typed_node_inl.hpp", "(none)"):
        "a message's word for a service without methods, not the metrics' label",
    ("include/launchpad/detail/status/status_server.hpp", "serving"):
        "a node's state on the status page (starting, serving, restarting ...), not its health",
    ("python/launchpad_client/__init__.py", "stop"):
        "the name of launchpad_client.stop() in __all__, not a control line",
    ("python/launchpad_client/_wire/hints.py", "run"):
        "the name of a node's run() method, not the host's line",
    ("python/launchpad_client/_client/node.py", "json"):
        "the name of a format a user chooses (format=\"json\"), not the schema's kind",
    ("python/launchpad_client/_client/node.py", "(none)"):
        "a message's word for no methods or no Content-Type, not the metrics' label",
    ("python/launchpad_client/_client/program.py", "(none)"):
        "a message's word for a program without nodes or groups, not the metrics' label",
    ("python/launchpad_client/_node/main.py", "(none)"):
        "a message's word for a module without classes, not the metrics' label",
    ("python/launchpad_client/_wire/schema.py", "void"):
        "C++'s spelling of the type, for messages, not the schema's kind",
    ("python/launchpad_client/_node/methods.py", "run"):
        "the name of a node's run() method, which is not served, not the host's line",
    ("python/launchpad_client/_node/main.py", "run"):
        "the name of a Launchpad node's run() method, which it may lack, not the host's line",
    ("python/launchpad/__init__.py", "stop"):
        "the name of launchpad.stop() in __all__, not a control line",
    ("python/launchpad/_nodes.py", "run"):
        "the name of a Launchpad node's run() method, not the host's line",
}


def cpp_literals(text: str) -> list[tuple[int, str]]:
    """The string literals of C++ source, with their lines; comments skipped."""
    out: list[tuple[int, str]] = []
    i, line, n = 0, 1, len(text)
    previous_end = -1  # where the last string literal ended
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            close = text.find(")" + delimiter + '"', open_paren)
            out.append((line, text[open_paren + 1:close]))
            end = close + len(delimiter) + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "'":
            # A character literal ('"' among them), or a digit separator.
            if i > 0 and text[i - 1].isalnum() and not text[i - 2:i] in ("u8", "u'", "U'", "L'"):
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            j = i + 1
            chars = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    chars.append(text[j:j + 2].encode().decode("unicode_escape", "replace"))
                    j += 2
                else:
                    chars.append(text[j])
                    j += 1
            # Literals side by side are one: "a" "b" is "ab".
            if out and previous_end >= 0 and not text[previous_end:i].strip():
                out[-1] = (out[-1][0], out[-1][1] + "".join(chars))
            else:
                out.append((line, "".join(chars)))
            line += text.count("\n", i, j)
            i = previous_end = j + 1
        else:
            i += 1
    return out


def python_literals(text: str, path: str) -> list[tuple[int, str]]:
    """The str and bytes constants of a module (the pieces of f-strings
    too), with their lines; docstrings skipped."""
    tree = ast.parse(text, path)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            if isinstance(node.value, str):
                out.append((node.lineno, node.value))
            elif isinstance(node.value, bytes):
                out.append((node.lineno, node.value.decode("latin-1")))
    return out


def files() -> list[tuple[str, list[tuple[int, str]]]]:
    found = []
    for path in sorted((ROOT / "include").rglob("*.hpp")):
        relative = path.relative_to(ROOT).as_posix()
        if relative not in GENERATED:
            found.append((relative, cpp_literals(path.read_text(encoding="utf-8"))))
    for path in sorted((ROOT / "python").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative not in GENERATED:
            found.append((relative, python_literals(path.read_text(encoding="utf-8"), relative)))
    return found


# A scanner that stopped seeing literals would pass everything: it must find
# these, and nothing in comments or docstrings.
CPP_CANARY = r'''
// "/lp/v1/health" in a comment
/* "no_such_route" */
auto path = std::string("/lp/") + "v1/describe";  // joined: "/lp/v1/describe"
auto code = "payload"
            "_too_large";
char quote = '"'; auto kind = R"x(typed_array)x";
'''
PYTHON_CANARY = '''
"""Lp-Deadline-Ms in a docstring."""
head = f"Lp-Deadline-Ms: {ms}\\r\\n"
kinds = ("integer", b"stop")
'''


def check_scanner() -> list[str]:
    cpp = [value for _, value in cpp_literals(CPP_CANARY)]
    python = [value for _, value in python_literals(PYTHON_CANARY, "canary")]
    problems = []
    for wanted, found, language in (("v1/describe", cpp, "C++"), ("payload_too_large", cpp, "C++"),
                                    ("typed_array", cpp, "C++"), ("Lp-Deadline-Ms: ", python, "Python"),
                                    ("integer", python, "Python"), ("stop", python, "Python")):
        if wanted not in found:
            problems.append(f"the {language} scanner missed the literal {wanted!r}: it finds {found}")
    for unwanted in ("/lp/v1/health", "no_such_route", "Lp-Deadline-Ms in a docstring."):
        if unwanted in cpp + python:
            problems.append(f"the scanner took {unwanted!r} in a comment or docstring for a literal")
    return problems


def main() -> int:
    problems = check_scanner()
    if problems:
        print("\n".join(problems))
        return 1
    spec = protocol.read(ROOT / protocol.SOURCE)
    looked_for: list[tuple[str, str, str]] = []  # (mode, value, the names to use)
    tables = {table.name: table for table in spec.tables}
    for table, constant in spec.every_constant():
        if constant.scan == "none":
            continue
        cpp = "lp::detail::protocol::" + (f"{table}::" if table else "") + constant.key
        names = f"{cpp} in C++, _protocol.{protocol.python_name(table, constant.key)} in Python"
        values = constant.value if isinstance(constant.value, list) else [constant.value]
        row = tables[table] if table else None
        if row is not None and row.row_fields is not None:
            scanned = row.row_scanned or []
            values = [v for f, v in zip(row.row_fields, values) if f in scanned]
        for value in values:
            if isinstance(value, str):
                looked_for.append((constant.scan, value, names))
    unused = set(NOT_THE_PROTOCOL)
    for relative, literals in files():
        for line, literal in literals:
            lowered = literal.lower()
            seen = set()
            for mode, value, names in looked_for:
                hit = literal == value if mode == "literal" else value.lower() in lowered
                if not hit or value in seen:
                    continue
                seen.add(value)
                if (relative, value) in NOT_THE_PROTOCOL:
                    unused.discard((relative, value))
                    continue
                problems.append(f"{relative}:{line}: {literal[:70]!r} spells {value!r} by hand; "
                                f"name it: {names}")
    for relative, value in sorted(unused):
        problems.append(f"NOT_THE_PROTOCOL lists {relative} for {value!r}, which it no longer spells: "
                        "remove the entry")
    for problem in problems:
        print(problem)
    if problems:
        print(f"\n{len(problems)} protocol value(s) spelled by hand; their one source is "
              f"{protocol.SOURCE} (tools/protocol.py writes the names)")
        return 1
    count = sum(1 for _ in looked_for)
    print(f"protocol_spelled_once: {count} values, spelled nowhere in include/ and python/ but "
          "the files written from protocol.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
