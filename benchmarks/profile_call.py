#!/usr/bin/env python3
"""What one small call costs, client and server together: syscalls,
context switches, instructions, allocations and copies per call.

    benchmarks/profile_call.py [BUILD_DIR] [--tls]

Runs BUILD_DIR/benchmarks/profile_call (default build-release) twice for
each instrument, with few and with many calls, and divides the difference
by the calls between them, so the launch and the warm-up cancel out:
  - syscalls: strace -c -f (every thread);
  - context switches: perf stat's software counter (the VM may lack the
    hardware ones);
  - instructions, and calls to malloc/free and memcpy/memmove: callgrind.
Needs strace, linux-perf and valgrind (Debian packages of those names).
See benchmarks/README.md, "One call, profiled".
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, check=True, **kwargs)


def syscalls(program, calls, extra):
    out = run(["strace", "-c", "-f", program, str(calls)] + extra).stderr
    counts = {}
    for line in out.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            counts[fields[-1]] = int(fields[3])
    return counts


def context_switches(program, calls, extra):
    out = run(["perf", "stat", "-x,", "-e", "context-switches", program, str(calls)] + extra).stderr
    for line in out.splitlines():
        if "context-switches" in line:
            return int(line.split(",")[0])
    raise SystemExit("profile_call: perf printed no context-switches count:\n" + out)


def callgrind(program, calls, extra, directory):
    path = os.path.join(directory, "callgrind.%d" % calls)
    run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + path, program, str(calls)] + extra)
    report = run(["callgrind_annotate", "--tree=caller", "--threshold=100", path]).stdout
    total = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", report).group(1).replace(",", ""))
    # In the caller tree, "< caller (N x)" lines precede "* function" lines.
    called = collections.Counter()
    instructions = collections.Counter()
    pending = 0
    for line in report.splitlines():
        calls_here = re.search(r"<.*\(([\d,]+)x\)", line)
        if calls_here:
            pending += int(calls_here.group(1).replace(",", ""))
            continue
        own = re.match(r"\s*([\d,]+) \([^)]*\)\s+\*\s+(.*?)(?: \[|$)", line)
        if own:
            # "file:function", where file may be ???
            name = own.group(2).split(":", 1)[-1]
            called[name] += pending
            instructions[name] += int(own.group(1).replace(",", ""))
        pending = 0
    return total, called, instructions


def main():
    arguments = [a for a in sys.argv[1:] if a != "--tls"]
    extra = ["--tls"] if "--tls" in sys.argv[1:] else []
    build = arguments[0] if arguments else "build-release"
    program = os.path.join(build, "benchmarks", "profile_call")
    if not os.access(program, os.X_OK):
        raise SystemExit("profile_call: no %s; build it: meson compile -C %s profile_call"
                         % (program, build))
    few, many = 1000, 11000
    a, b = syscalls(program, few, extra), syscalls(program, many, extra)
    per_call = {name: (b.get(name, 0) - a.get(name, 0)) / (many - few) for name in b}
    busy = {name: n for name, n in per_call.items() if n >= 0.05}
    switches = (context_switches(program, many, extra) - context_switches(program, few, extra)) / (many - few)
    few, many = 200, 2200
    with tempfile.TemporaryDirectory() as directory:
        total_a, called_a, own_a = callgrind(program, few, extra, directory)
        total_b, called_b, own_b = callgrind(program, many, extra, directory)
    span = many - few

    def calls_of(*names):
        return sum(called_b[n] - called_a[n] for n in names) / span

    def instructions_of(*names):
        return sum(own_b[n] - own_a[n] for n in names) / span

    print("one small call (add(long), test_multi_threading%s), client and server together"
          % (", TLS" if extra else ""))
    print("  syscalls per call:        %.1f (%s)" % (
        sum(busy.values()),
        ", ".join("%s %.1f" % (n, c) for n, c in sorted(busy.items(), key=lambda x: -x[1]))))
    print("  context switches per call: %.1f" % switches)
    print("  instructions per call:    %.1fk" % ((total_b - total_a) / span / 1000))
    # operator new calls malloc: counting malloc counts both.
    print("  allocations per call:     %.1f (malloc), %.1fk instructions in malloc and free" % (
        calls_of("malloc"), instructions_of("malloc", "free", "_int_malloc", "_int_free") / 1000))
    print("  memcpy/memmove per call:  %.1f calls, %.1fk instructions" % (
        calls_of("__memcpy_avx_unaligned_erms", "__memmove_avx_unaligned_erms"),
        instructions_of("__memcpy_avx_unaligned_erms", "__memmove_avx_unaligned_erms") / 1000))
    print("  tolower per call:         %.1fk instructions" % (instructions_of("tolower") / 1000))


if __name__ == "__main__":
    main()
