#!/usr/bin/env python3
"""What including Launchpad costs a user's translation unit, as ratios.

Compiles the TUs of benchmarks/compile_cost/ with -c, interleaved with the
baseline (deps_only.cpp: only boost/hana.hpp, nlohmann/json.hpp and the
OpenSSL headers the library includes, nothing of ours) in every round, and
prints CPU seconds (user + sys of the compiler) and peak memory for each, and
their ratio to the baseline of the same round. The machine is shared, so each figure is a range over the rounds.

Three setups are measured:
  meson   the setup the README recommends: dependency('launchpad'), which
          builds the library's compiled part once and defines
          LP_SEPARATE_COMPILATION for the user's code;
  single  the zero-configuration path: g++ on single_include/, no macro;
  split   g++ on single_include/ with LP_SEPARATE_COMPILATION, and the
          compiled part in one file of its own that defines LP_IMPLEMENTATION
          (docs/getting-started.md): its cost, paid once, is a row of its own.

    python3 benchmarks/compile_cost.py                # 3 rounds, g++
    python3 benchmarks/compile_cost.py --rounds 5 --compiler clang++
    python3 benchmarks/compile_cost.py --quick        # 1 round, -O2 only
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TUS = ROOT / "benchmarks" / "compile_cost"

# (label, file, extra flags). The extra-method row is the same program with
# one more method on one service.
PROGRAMS = [
    ("include only, empty main", "include_only.cpp", []),
    ("3 services, graph, no launch", "services_graph.cpp", []),
    ("1 trivial node + lp::launch", "trivial_launch.cpp", []),
    ("3 services + lp::launch", "services_launch.cpp", []),
    ("3 services + lp::launch, one more method", "services_launch.cpp",
     ["-DLP_COMPILE_COST_EXTRA"]),
]


def pkg_cflags() -> list[str]:
    out = subprocess.run(["pkg-config", "--cflags", "nlohmann_json", "openssl"],
                         check=True, capture_output=True, text=True).stdout
    return shlex.split(out)


def setups(root: Path) -> dict[str, list[str]]:
    return {
        "meson": ["-I", str(root / "include"), "-DLP_SEPARATE_COMPILATION"],
        "single": ["-I", str(root / "single_include")],
        "split": ["-I", str(root / "single_include"), "-DLP_SEPARATE_COMPILATION"],
    }


# The split setup's file with the compiled part, built once, not per edit.
IMPLEMENTATION = ("the compiled part, once (LP_IMPLEMENTATION)", "implementation.cpp", [])


def programs_of(setup: str) -> list[tuple[str, str, list[str]]]:
    return [IMPLEMENTATION, *PROGRAMS] if setup == "split" else PROGRAMS


def compile_once(compiler: str, flags: list[str], source: Path, out: Path) -> tuple[float, int]:
    """CPU seconds and peak RSS (MB) of one compile."""
    command = [compiler, "-std=c++20", *flags, "-c", str(source), "-o", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"compile_cost: {' '.join(command)} failed:\n{stderr[-3000:]}")
    # ru_maxrss of RUSAGE_CHILDREN would be the largest child so far; wait4's
    # is this compiler's (cc1plus is its child, and counted in it).
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def span(values: list[float], digits: int) -> str:
    low, high = min(values), max(values)
    if f"{low:.{digits}f}" == f"{high:.{digits}f}":
        return f"{low:.{digits}f}"
    return f"{low:.{digits}f}-{high:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compiler", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--opt", action="append", choices=["-O0", "-O2"],
                        help="optimisation levels (default: -O2 and -O0)")
    parser.add_argument("--setup", action="append", choices=["meson", "single", "split"],
                        help="setups to measure (default: all three)")
    parser.add_argument("--quick", action="store_true", help="1 round, -O2 only")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose headers are measured (default: this one), "
                        "e.g. an older one for a before-and-after")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    opts = args.opt or (["-O2"] if args.quick else ["-O2", "-O0"])
    chosen = args.setup or ["meson", "single", "split"]
    base_flags = pkg_cflags()

    rows = []
    with tempfile.TemporaryDirectory(prefix="lp-compile-cost-") as tmp:
        out = Path(tmp) / "tu.o"
        for setup in chosen:
            for opt in opts:
                flags = [*base_flags, opt, *setups(args.root.resolve())[setup]]
                programs = programs_of(setup)
                results = {label: [] for label, _, _ in programs}
                baseline: list[tuple[float, int]] = []
                for round_ in range(rounds):
                    print(f"{setup} {opt} round {round_ + 1}/{rounds}", file=sys.stderr)
                    base = compile_once(args.compiler, [*base_flags, opt], TUS / "deps_only.cpp",
                                        out)
                    baseline.append(base)
                    for label, name, extra in programs:
                        cpu, rss = compile_once(args.compiler, [*flags, *extra], TUS / name, out)
                        results[label].append((cpu, rss, base[0], base[1]))
                rows.append((setup, opt, "deps only (baseline)",
                             [c for c, _ in baseline], [1.0], [m for _, m in baseline], [1.0]))
                for label, _, _ in programs:
                    r = results[label]
                    rows.append((setup, opt, label, [c for c, _, _, _ in r],
                                 [c / b for c, _, b, _ in r], [m for _, m, _, _ in r],
                                 [m / bm for _, m, _, bm in r]))
                # One more method: its own cost against the same program in the same round.
                extra = [e[0] - p[0] for e, p in zip(results[PROGRAMS[-1][0]],
                                                      results[PROGRAMS[-2][0]])]
                rows.append((setup, opt, "  one more method adds (s)", extra, None, None, None))

    print(f"\ncompiler: {args.compiler}; {rounds} round(s); ratio = TU / deps-only TU of the "
          "same round\n")
    print("| setup | opt | translation unit | CPU s | ratio | peak MB | mem ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for setup, opt, label, cpu, ratio, mem, mratio in rows:
        if ratio is None:
            print(f"| {setup} | {opt} | {label} | {span(cpu, 2)} | | | |")
        else:
            print(f"| {setup} | {opt} | {label} | {span(cpu, 1)} | {span(ratio, 2)} | "
                  f"{span(mem, 0)} | {span(mratio, 2)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
