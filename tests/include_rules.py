#!/usr/bin/env python3
"""Checks the include rules between the library's layers (docs/concepts.md,
"How the library is built"). Reads the headers as text; compiles nothing.

1. A header in include/launchpad/detail/<layer>/ includes only headers of its
   own layer or of the layers below it:

       protocol, util < lifecycle < wire, observe, tls < reflect < call, serve
            < graph, replay < settings < cli, os, checkpoint < status, python
            < host < process < slurm, kube

   and call and serve never include each other: a client never needs a
   server, and a server never needs a client. Nor do status and python: the
   launcher's page and a Python node's host share only what lies below them
   (os/: output, signals, the run directory); host, which serves the page
   and hosts Python nodes, ranks above both. A public header a layer
   includes counts as the layers it reaches (following public headers, also
   into the compiled part): they must all lie strictly below the includer's,
   since a public header that reaches one's own layer sits in the middle of
   it.
2. No header reaches <httplib.h>, compiled part or not: the library speaks
   HTTP/1.1 itself (detail/wire/http1.hpp), so that its users need no
   cpp-httplib; only the tests and benchmarks use it.
3. What a user's code includes with LP_SEPARATE_COMPILATION (every public
   header, without the compiled part that launch.hpp includes under
   `#if LP_DETAIL_DEFINE_COMPILED_PART`) reaches no server, launcher, process
   or Slurm header.
4. From a public header, <nlohmann/json.hpp> is reached without the
   compiled part only through <launchpad/json.hpp>: the rest of a user's
   code sees only
   <nlohmann/json_fwd.hpp> (parsing nlohmann's header is a second of every
   build).
5. The include graph has no cycle (but the compiled part's include at the
   end of launch.hpp, which leads back to it).
6. A public type sits in a public header: a detail header declares nothing
   in namespace lp outside lp::detail but forward declarations.
7. One place decides where the compiled part is defined: no header but
   launch.hpp holds `#if LP_DETAIL_DEFINE_COMPILED_PART`, and only there is
   detail/implementation.hpp included. A header's definitions sit in
   impl/<name>_inl.hpp beside it, which includes it first; implementation.hpp
   includes every one of them, and no other header does. An _inl file counts
   as its header's layer (rule 1).
8. Every LP_API definition (a function with its body) sits in an impl/ file:
   a header declares its share of the compiled part, and only declares it.
9. The launcher of processes and its parts are included only where they are
   used: a header that includes one of them (USED_FOR) names what it holds.
   The Slurm and Kubernetes launches plan their processes (process/units.hpp)
   and know whose run() returned (process/finished_runs.hpp) without the
   launcher that local_mp and the Slurm job's supervisor run.

Exits 1 and names every broken rule, with the chain of includes that breaks it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "include"
RANK = {"protocol": 0, "util": 0, "lifecycle": 1, "wire": 2, "observe": 2, "tls": 2, "reflect": 3, "call": 4,
        "serve": 4, "graph": 5, "replay": 5, "settings": 6, "cli": 7, "os": 7, "checkpoint": 7, "status": 8,
        "python": 8, "host": 9, "process": 10, "slurm": 11, "kube": 11}
APART = {("call", "serve"), ("serve", "call"), ("status", "python"), ("python", "status")}
# Reached by a user's code only through the compiled part.
COMPILED_ONLY = re.compile(r"launchpad/detail/(python/|serve/(http_server|listener)|host/(node_host|in_process)"
                           r"|os/|settings/|cli/"
                           r"|checkpoint/checkpoints|status/|tls/|process/|slurm/|kube/|implementation|launchers)|/impl/")
JSON_HEADER = "launchpad/json.hpp"
IMPLEMENTATION = "launchpad/detail/implementation.hpp"
DECIDES = "launchpad/launch.hpp"  # the one header that holds the compiled part's #if
# A header of the launcher of processes -> the name its includer must use.
USED_FOR = {"launchpad/detail/process/launcher.hpp": "process_launch",
            "launchpad/detail/process/supervision.hpp": "unit_supervisor",
            "launchpad/detail/process/unit_table.hpp": "unit_table",
            "launchpad/detail/process/unit_logs.hpp": "unit_logs",
            "launchpad/detail/process/local_launch.hpp": "processes_launch"}
INL = re.compile(r"^(?P<dir>.*)/impl/(?P<name>\w+)_inl\.hpp$")
INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
COMPILED_PART_IF = re.compile(r"^\s*#\s*if\s+LP_DETAIL_DEFINE_COMPILED_PART\b")
IF = re.compile(r"^\s*#\s*if")
ENDIF = re.compile(r"^\s*#\s*endif")


def includes(header: str, with_compiled_part: bool = True) -> list[str]:
    """The <...> includes of a header; without those in the compiled part's #if."""
    found, depth, skip_from = [], 0, None
    for line in (ROOT / header).read_text().splitlines():
        if IF.match(line):
            depth += 1
            if COMPILED_PART_IF.match(line) and not with_compiled_part and skip_from is None:
                skip_from = depth
        elif ENDIF.match(line):
            if skip_from == depth:
                skip_from = None
            depth -= 1
        elif (m := INCLUDE.match(line)) and skip_from is None:
            found.append(m.group(1))
    return found


def lp_api_definitions(header: str) -> list[str]:
    """The LP_API functions that `header` defines (with a body), by their first line."""
    lines = [LITERAL.sub('""', line).split("//")[0] for line in (ROOT / header).read_text().splitlines()]
    code = "\n".join(lines)
    found = []
    for m in re.finditer(r"\bLP_API\b", code):
        depth, at = 0, m.end()
        while at < len(code):
            c = code[at]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c in ";{":
                break
            at += 1
        if at < len(code) and code[at] == "{":
            found.append(code[m.start():].split("\n", 1)[0].strip())
    return found


def layer(header: str) -> str:
    parts = header.split("/")
    if len(parts) >= 4 and parts[1] == "detail" and parts[2] in RANK:
        return parts[2]
    if parts[1] == "impl":
        return "impl"  # the public headers' definitions: the compiled part, never a user's include
    return "public" if parts[1] != "detail" else "detail"


def library(name: str) -> bool:
    return name.startswith("launchpad/")


def chains(start: str, with_compiled_part: bool):
    """Every header reachable from `start`, each with one chain that reaches it."""
    seen = {start: [start]}
    todo = [start]
    while todo:
        header = todo.pop()
        for name in includes(header, with_compiled_part) if library(header) else []:
            if name not in seen:
                seen[name] = seen[header] + [name]
                if library(name):
                    todo.append(name)
    return seen


def through_public(name: str) -> dict[str, list[str]]:
    """The detail headers a public header reaches through public headers only,
    each with the chain of public headers that leads to it."""
    seen, todo, found = {name: [name]}, [name], {}
    while todo:
        header = todo.pop()
        for inner in includes(header):
            if not library(inner) or inner in seen:
                continue
            seen[inner] = seen[header] + [inner]
            if layer(inner) == "public":
                todo.append(inner)
            elif layer(inner) in RANK:
                found[inner] = seen[inner]
    return found


LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
NAMESPACE = re.compile(r"namespace\s+([\w:]+)\s*\{")
DEFINITION = re.compile(r"^\s*(?:template\s*<.*>\s*)?(?:(?:struct|class|enum(?:\s+class)?|union)\s+\w+[^;]*$"
                        r"|concept\s+\w+|using\s+\w+\s*=|(?:inline\s+)?(?:constexpr|const)\s+\w.*=)")


def public_declarations(header: str) -> list[str]:
    """The lines of a detail header that declare something in namespace lp
    itself (not lp::detail), forward declarations aside."""
    scopes, found = [], []
    for line in (ROOT / header).read_text().splitlines():
        code = LITERAL.sub('""', line).split("//")[0]
        if code.lstrip().startswith("#"):
            continue
        if scopes == ["lp"] and DEFINITION.match(code):
            found.append(line.strip())
        at = 0
        while at < len(code):
            if (m := NAMESPACE.match(code, at)):
                scopes.append(m.group(1))
                at = m.end()
            elif code[at] == "{":
                scopes.append("{")
                at += 1
            elif code[at] == "}":
                scopes.pop()
                at += 1
            else:
                at += 1
    return found


def main() -> int:
    headers = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.hpp"))
    problems = []

    for header in headers:
        mine = layer(header)
        for name in includes(header):
            if not library(name) or mine not in RANK:
                continue
            theirs = layer(name)
            if theirs == "detail":
                continue
            if theirs == "public":
                for inner, chain in through_public(name).items():
                    below = layer(inner)
                    if RANK[below] >= RANK[mine] or (mine, below) in APART:
                        problems.append(f"{header} ({mine}) includes {' -> '.join(chain)} ({below})")
                continue
            if RANK[theirs] > RANK[mine] or (mine, theirs) in APART:
                problems.append(f"{header} ({mine}) includes {name} ({theirs})")

    for header in headers:
        reached = chains(header, with_compiled_part=True)
        if "httplib.h" in reached:
            problems.append(f"{header} reaches <httplib.h>: " + " -> ".join(reached["httplib.h"]))

    for header in headers:
        if layer(header) != "public":
            continue
        for name, chain in chains(header, with_compiled_part=False).items():
            if COMPILED_ONLY.search(name):
                problems.append(f"{header} reaches {name} without the compiled part: " +
                                " -> ".join(chain))

    for header in headers:
        if layer(header) != "public" or header == JSON_HEADER:
            continue
        reached = chains(header, with_compiled_part=False)
        if "nlohmann/json.hpp" in reached:
            problems.append(f"{header} reaches <nlohmann/json.hpp> without the compiled part: " +
                            " -> ".join(reached["nlohmann/json.hpp"]))

    # launch.hpp's compiled part comes after its declarations, and its _inl
    # file includes launch.hpp again, as every _inl file its header: that one
    # include back is no cycle.
    for header in headers:
        for name in includes(header, with_compiled_part=False):
            if library(name) and header in chains(name, with_compiled_part=False):
                problems.append(f"include cycle: {header} -> {name} -> ... -> {header}")

    for header in headers:
        if layer(header) == "public":
            continue
        for line in public_declarations(header):
            problems.append(f"{header} declares in namespace lp, not lp::detail: {line} "
                            "(a public type belongs in a public header)")

    inls = {header for header in headers if INL.match(header)}
    for header in headers:
        text = (ROOT / header).read_text()
        if header != DECIDES and any(COMPILED_PART_IF.match(line) for line in text.splitlines()):
            problems.append(f"{header} holds #if LP_DETAIL_DEFINE_COMPILED_PART: only {DECIDES} "
                            "decides where the compiled part is defined; move the definitions "
                            "to an impl/<name>_inl.hpp beside the header")
        for name in includes(header):
            if name == IMPLEMENTATION and header != DECIDES:
                problems.append(f"{header} includes {IMPLEMENTATION}: only {DECIDES} does")
            if name in inls and header != IMPLEMENTATION:
                problems.append(f"{header} includes {name}: only {IMPLEMENTATION} includes the "
                                "_inl files")
    if IMPLEMENTATION not in includes(DECIDES):
        problems.append(f"{DECIDES} does not include {IMPLEMENTATION}")
    for header in sorted(inls):
        m = INL.match(header)
        own = f"{m['dir']}/{m['name']}.hpp"
        found = [name for name in includes(header) if library(name)]
        if not (ROOT / own).is_file():
            problems.append(f"{header} sits beside no {own}")
        elif not found or found[0] != own:
            problems.append(f"{header} does not include {own} first")
        if header not in includes(IMPLEMENTATION):
            problems.append(f"{IMPLEMENTATION} does not include {header}: its definitions "
                            "would be compiled nowhere")

    for header in headers:
        if "/impl/" in header or header == "launchpad/detail/config.hpp":
            continue
        for line in lp_api_definitions(header):
            problems.append(f"{header} defines an LP_API function: {line} (its definition "
                            "belongs in the impl/<name>_inl.hpp beside the header)")

    for header in headers:
        code = "\n".join(LITERAL.sub('""', line).split("//")[0]
                         for line in (ROOT / header).read_text().splitlines()
                         if not INCLUDE.match(line))
        for name in includes(header):
            if name in USED_FOR and not re.search(rf"\b{USED_FOR[name]}\b", code):
                problems.append(f"{header} includes {name} but uses no {USED_FOR[name]}: "
                                "include the smaller header it needs (process/units.hpp, "
                                "process/finished_runs.hpp, process/process_options.hpp)")

    for problem in problems:
        print(problem)
    print(f"include rules: {len(headers)} headers, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
