#!/usr/bin/env python3
"""Runs the counter example once per launch flag given and fails unless it
exits 0 and prints the total, as the README says it does.

    check.py <counter binary> --lp_launch=test_mt [--lp_launch=local_mp ...]
"""
import subprocess
import sys

EXPECTED = "total: 4000"

binary, *launches = sys.argv[1:]
for launch in launches or [""]:
    args = [binary] + ([launch] if launch else [])
    run = subprocess.run(args, capture_output=True, text=True, timeout=50)
    if run.returncode != 0 or EXPECTED not in run.stdout:
        sys.exit(f"{' '.join(args)}: exit status {run.returncode}, expected 0 and "
                 f"'{EXPECTED}' on stdout\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}")
    print(f"{' '.join(args)}: {EXPECTED}")
