#!/usr/bin/env python3
"""Writes the API reference from the public headers' comments (doxygen, with
docs/Doxyfile) and fails unless every public name is documented.

    tools/reference.py [OUT]    # OUT/html/index.html; default build/reference

Three checks, each of which fails the run:
  1. doxygen warns of nothing: no undocumented class, member, function,
     macro or file, no @param that names no parameter, no broken reference;
  2. every public name has a description, as doxygen's XML lists them with
     EXTRACT_ALL: it also holds the names doxygen does not warn of (a
     concept, an enumerator);
  3. both checks still catch an undocumented name of every kind, in a small
     header made for it (a newer doxygen that stopped warning of one would
     otherwise pass everything).

Exits 77 (skipped) without doxygen, unless LP_REQUIRE_DOXYGEN is set (as
.ci/run does): then a missing doxygen fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOXYFILE = ROOT / "docs" / "Doxyfile"

# One undocumented name of each kind, beside documented ones that must not
# be reported; the names check 3 expects check 2 to report.
CANARY = """\
#pragma once
/// @file
/// A header whose every undocumented name must be found.

#define CANARY_UNDOCUMENTED_MACRO 1
/// Documented.
#define CANARY_DOCUMENTED_MACRO 1

/// Documented.
namespace lp {
struct undocumented_class {
  int field;
};
/// Documented.
class documented_class {
 public:
  void undocumented_member();
  /// Documented.
  void documented_member();
  int undocumented_field = 0;

 protected:
  void undocumented_protected();

 private:
  void private_member();
};
template <class T>
concept undocumented_concept = true;
/// Documented.
template <class T>
concept documented_concept = true;
void undocumented_function();
inline constexpr int undocumented_variable = 0;
using undocumented_alias = int;
/// Documented.
enum class documented_enum {
  undocumented_enumerator,
  documented_enumerator,  ///< Documented.
};
namespace detail {
void internal();
}
}  // namespace lp
"""
CANARY_UNDOCUMENTED = {
    "CANARY_UNDOCUMENTED_MACRO", "lp::undocumented_class", "lp::undocumented_class::field",
    "lp::documented_class::undocumented_member",
    "lp::documented_class::undocumented_field", "lp::documented_class::undocumented_protected",
    "lp::undocumented_concept", "lp::undocumented_function", "lp::undocumented_variable",
    "lp::undocumented_alias", "lp::documented_enum::undocumented_enumerator"}


def missing_doxygen() -> int:
    if os.environ.get("LP_REQUIRE_DOXYGEN"):
        print("FAIL: no doxygen (apt-get install doxygen); LP_REQUIRE_DOXYGEN is set")
        return 1
    print("SKIP: no doxygen (apt-get install doxygen) to write and check the reference")
    return 77


def version() -> str:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "version.py")], check=True,
                          capture_output=True, text=True).stdout.strip()


def doxygen(settings: dict[str, str]) -> tuple[int, list[str]]:
    """Runs doxygen on docs/Doxyfile with `settings` on top, from the root;
    returns its status and the lines it wrote to stderr (its warnings)."""
    config = DOXYFILE.read_text() + "".join(f"\n{k} = {v}" for k, v in settings.items()) + "\n"
    run = subprocess.run(["doxygen", "-"], input=config, cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    # A namespace's member is warned of twice: as the file's and the namespace's.
    lines = dict.fromkeys(line for line in run.stderr.splitlines() if line.strip())
    return run.returncode, list(lines)


def described(element: ET.Element) -> bool:
    for part in ("briefdescription", "detaileddescription", "inbodydescription"):
        text = element.find(part)
        if text is not None and "".join(text.itertext()).strip():
            return True
    return False


def undocumented(xml: Path) -> list[str]:
    """Every public name in doxygen's XML (written with EXTRACT_ALL) that has
    no description, as 'file:line: name (kind)'."""
    found: dict[str, str] = {}

    def report(element: ET.Element, name: str, kind: str) -> None:
        where = element.find("location")
        place = f"{where.get('file')}:{where.get('line')}" if where is not None else "?"
        found.setdefault(name, f"{place}: {name} ({kind})")

    for path in sorted(xml.glob("*.xml")):
        if path.name in ("index.xml", "Doxyfile.xml"):
            continue
        for compound in ET.parse(path).getroot().iter("compounddef"):
            kind, name = compound.get("kind"), compound.findtext("compoundname")
            if kind in ("dir", "page") or kind == "file" and name.endswith(".md"):
                continue  # docs/reference.md, the main page
            if kind == "namespace" and not (name == "lp" or name.startswith("lp::")):
                continue  # nlohmann's, which json.hpp specializes in
            if compound.get("prot") == "private":
                continue
            if not described(compound):
                report(compound, name, kind)
            for section in compound.iter("sectiondef"):
                if section.get("kind").startswith("private") or section.get("kind") == "friend":
                    continue
                for member in section.iter("memberdef"):
                    scope = "" if kind == "file" else name + "::"
                    member_name = scope + member.findtext("name")
                    if not described(member):
                        report(member, member_name, member.get("kind"))
                    for value in member.iter("enumvalue"):
                        if not described(value):
                            report(member, member_name + "::" + value.findtext("name"),
                                   "enumerator")
    return sorted(found.values())


def check(inputs: str | None, out: Path, project_number: str) -> tuple[list[str], list[str]]:
    """Runs checks 1 and 2 on `inputs` (the Doxyfile's own INPUT if None);
    writes the HTML to out/html. Returns doxygen's warnings and the
    undocumented names."""
    settings = {"OUTPUT_DIRECTORY": str(out), "PROJECT_NUMBER": project_number}
    if inputs is not None:
        settings.update(INPUT=inputs, USE_MDFILE_AS_MAINPAGE="")
    shutil.rmtree(out / "html", ignore_errors=True)
    status, warnings = doxygen(settings)
    if (status != 0) != bool(warnings):
        warnings.append(f"doxygen exited with status {status}")
    with tempfile.TemporaryDirectory(prefix="lp-reference-") as scratch:
        listing = {**settings, "OUTPUT_DIRECTORY": scratch, "EXTRACT_ALL": "YES",
                   "GENERATE_HTML": "NO", "GENERATE_XML": "YES", "WARN_AS_ERROR": "NO",
                   "WARNINGS": "NO"}
        doxygen(listing)
        names = undocumented(Path(scratch) / "xml")
    return warnings, names


def canary_holds() -> list[str]:
    """Check 3: what the checks failed to find in CANARY (nothing if they work)."""
    failures = []
    with tempfile.TemporaryDirectory(prefix="lp-reference-canary-") as scratch:
        header = Path(scratch) / "include" / "canary.hpp"
        header.parent.mkdir()
        header.write_text(CANARY)
        warnings, names = check(str(header.parent), Path(scratch) / "out", "canary")
        if not any("undocumented_class" in w for w in warnings):
            failures.append("doxygen did not warn of an undocumented class")
        if any(w.endswith("exited with status 0") for w in warnings):
            failures.append("doxygen's warnings did not fail it (WARN_AS_ERROR)")
        reported = {n.split(": ", 1)[1].rsplit(" (", 1)[0] for n in names}
        for name in sorted(CANARY_UNDOCUMENTED - reported):
            failures.append(f"the check missed the undocumented {name}")
        for name in sorted(reported - CANARY_UNDOCUMENTED):
            failures.append(f"the check reported {name}, which is documented or internal")
    return failures


def main() -> int:
    out = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "build" / "reference"
    if shutil.which("doxygen") is None:
        return missing_doxygen()
    failures = canary_holds()
    if failures:
        print("tools/reference.py: the checks no longer catch undocumented names "
              f"(doxygen {subprocess.run(['doxygen', '--version'], capture_output=True, text=True).stdout.strip()}):")
        print("\n".join("  " + f for f in failures))
        return 1
    warnings, names = check(None, out, version())
    for line in warnings:
        print(line.replace(str(ROOT) + "/", ""))
    if names:
        print(f"{len(names)} public names have no documentation; write a /// comment above each:")
        print("\n".join("  " + n.replace(str(ROOT) + "/", "") for n in names))
    if warnings or names:
        print("tools/reference.py: the reference is incomplete (docs/reference.md says how to "
              "document a name)")
        return 1
    print(f"tools/reference.py: every public name is documented; {out / 'html' / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
