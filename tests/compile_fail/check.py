#!/usr/bin/env python3
"""Runs one compile-fail case and reports whether it failed for the right reason.

Usage: check.py <compiler> <source> [extra flags...]

<compiler> may be several arguments (meson's cmd_array(), e.g. `ccache g++`):
the source is the first argument ending in .cpp, .cc or .cxx; the arguments
before it are the compiler command and those after it extra flags.

A compile-fail case is a small .cpp file under tests/compile_fail/ that must
NOT compile. Its first lines hold one or more comments

    // expect: <substring>

each naming text that the compiler's diagnostics must contain, usually the
library's static_assert message (g++ and clang++ both print it verbatim) and
the condition printed beside it, which names the types involved. It may
also hold comments

    // expect-not: <substring>

each naming text the diagnostics must not contain: a second message that
would mislead, which the library takes care to leave out.
The compiler runs in the C locale, and typographic quotes in its output are
read as ASCII ones, so `'name'` matches what g++ and clang++ both print.
This script runs

    <compiler> -std=c++20 -fsyntax-only -I<repo>/include [extra flags...] <source>

where <repo> is two directories above this script. tests/compile_fail/
meson.build passes -DLP_SEPARATE_COMPILATION, as dependency('launchpad')
does for a user's code.

The exit status is inverted on purpose. meson registers each case with
`should_fail: true`, so meson counts a case as passing exactly when this
script exits non-zero. Therefore:

  * the source fails to compile, the output contains every expected text
    and has at most MAX_LINES lines -> the case works as intended: print a
    confirmation, exit 1 (meson: OK);
  * the source compiles -> the library accepts a mistake it should reject:
    print "compiled, but must not", exit 0 (meson: FAIL);
  * the source fails to compile but an expected text is absent -> it broke
    for another reason (a typo in the case, a changed message, a cascade of
    unrelated errors): print the start of the compiler's output and
    "failed for another reason than expected: <text>", exit 0 (meson: FAIL);
  * the output holds an `expect-not` text -> the intended message comes
    with a misleading one: print the output's start and "says what it must
    not: <text>", exit 0 (meson: FAIL);
  * the output has the texts but more than MAX_LINES lines -> the message
    is buried in a cascade (or the cascade merely happens to contain the
    text): print the output's start and "... lines of output, more than
    MAX_LINES", exit 0 (meson: FAIL).

Problems with the script's own invocation (missing arguments, no expect
line, compiler not found) exit 0 as well, so that they too show up as
failures rather than as passes.
"""

import os
import re
import subprocess
import sys

SHOWN_LINES = 40
# The most lines of compiler output a case may produce, counted the same way
# for every compiler: the output's lines after colour codes are removed
# (str.splitlines), the "In file included from" and "N errors generated."
# lines included, but not the source lines that g++ quotes in its gutter
# ("  27 |   code", "     |   ~~~^~~"): g++ 14 quotes one under every
# "required from" note, g++ 12 only under the error. A user reads a library
# diagnostic once: its message, the condition that names the types, and a
# short chain of "required from" / "in instantiation of" notes down to their
# own line. 28 holds that with g++ and clang++ (clang++ 14 spends three
# lines on each note: the note, the source line and the caret; the longest
# chain, a cacher's check reached through add_node's test that its node is
# a service, has seven notes: 26 lines); a longer output is a cascade,
# whatever text it contains.
MAX_LINES = 28
GUTTER = re.compile(r"^\s*\d*\s\|")
DEPENDENT_TEMPLATE = re.compile(r"::(?:template )+")
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx")
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# g++ quotes names with typographic quotes in a UTF-8 locale; clang++ uses '.
TYPOGRAPHIC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
EXPECT = re.compile(r"^\s*//\s*expect:\s*(.*?)\s*$")
EXPECT_NOT = re.compile(r"^\s*//\s*expect-not:\s*(.*?)\s*$")


def expected_texts(source, pattern=EXPECT):
    found = []
    with open(source, encoding="utf-8") as f:
        for line in f:
            match = pattern.match(line)
            if match and match.group(1):
                found.append(match.group(1))
    return found


def main(argv):
    at = next((i for i, a in enumerate(argv) if i >= 2 and a.endswith(SOURCE_SUFFIXES)), None)
    if at is None:
        print("usage: check.py <compiler> <source> [extra flags...]")
        return 0  # a misuse must not pass as an expected failure
    compiler, source, extra = argv[1:at], argv[at], argv[at + 1:]
    name = os.path.basename(source)

    try:
        expected = expected_texts(source)
        unwanted = expected_texts(source, EXPECT_NOT)
    except OSError as e:
        print(f"{name}: cannot read the case: {e}")
        return 0
    if not expected:
        print(f"{name}: no '// expect: <text>' line")
        return 0

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    command = compiler + ["-std=c++20", "-fsyntax-only", "-I" + os.path.join(repo, "include")]
    command += extra + [source]
    # English, ASCII diagnostics: the expected texts are English, and in a
    # UTF-8 locale g++ quotes names with U+2018/U+2019 instead of '.
    env = dict(os.environ, LC_ALL="C", LANG="C", LANGUAGE="C")
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", env=env)
    except OSError as e:
        print(f"{name}: cannot run {' '.join(compiler)}: {e}")
        return 0
    # clang++ 19 spells a dependent member template in the condition it
    # prints as "::template name<...>" (at times "::template template"),
    # earlier compilers as "::name<...>".
    output = DEPENDENT_TEMPLATE.sub(
        "::", ANSI_ESCAPE.sub("", result.stdout).translate(TYPOGRAPHIC_QUOTES))

    if result.returncode == 0:
        print(f"{name}: compiled, but must not")
        return 0
    lines = [line for line in output.splitlines() if not GUTTER.match(line)]
    missing = [text for text in expected if text not in output]
    said = [text for text in unwanted if text in output]
    if not missing and not said and len(lines) <= MAX_LINES:
        print(f"{name}: fails to compile as expected ({len(lines)} lines): {expected[0]}")
        return 1
    print("\n".join(lines[:SHOWN_LINES]))
    if len(lines) > SHOWN_LINES:
        print(f"... ({len(lines) - SHOWN_LINES} more lines)")
    if missing:
        print(f"{name}: failed for another reason than expected: {missing[0]}")
    elif said:
        print(f"{name}: says what it must not: {said[0]}")
    else:
        print(f"{name}: {len(lines)} lines of output, more than {MAX_LINES}: the diagnostic is "
              "buried in a cascade")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
