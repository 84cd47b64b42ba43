"""What a launch's run directory tells a client: the secret, and where each
node serves.

A launch with a run directory (local_mt, local_mp, test_multi_processing,
Slurm) keeps there the file `secret` (docs/launching.md#the-run-directory)
and the file `nodes`, to which every node appends a line `<label> <url>`
once it serves (docs/protocol.md#introspection). A restarted node appends
its new address, so the last line for a label wins. What the nodes print in
logs is for people: its wording may change, and nothing here reads it.
"""

from __future__ import annotations

import os
import re

from . import _protocol as protocol


def read_secret(run_dir: str | os.PathLike[str]) -> str | None:
    """The launch's secret, from `<run_dir>/secret`; None for a launch
    without one (--lp_insecure makes no file)."""
    if not os.path.isdir(run_dir):
        raise FileNotFoundError(f"no run directory {run_dir}: has the program ended? (a launch "
                                "removes its run directory when it ends)")
    path = os.path.join(run_dir, protocol.RUN_DIRECTORY_SECRET)
    try:
        with open(path, encoding="ascii") as f:
            secret = f.read().strip()
    except FileNotFoundError:
        return None
    if not secret:
        raise ValueError(f"{path} is empty")
    return secret


def node_addresses(run_dir: str | os.PathLike[str]) -> dict[str, str]:
    """Label -> URL of the nodes the run directory's file `nodes` lists so
    far, the last line of each label; {} before any node serves. A line the
    launch is still writing (no newline yet) waits for the next read."""
    try:
        with open(os.path.join(run_dir, protocol.RUN_DIRECTORY_NODES), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    found: dict[str, str] = {}
    for line in text.split("\n")[:-1]:
        parts = line.split()
        if len(parts) == 2:
            found[parts[0]] = parts[1].rstrip("/")
    return found


def program_name(run_dir: str | os.PathLike[str]) -> str | None:
    """The program's name from a run directory named lp-<program>-XXXXXX."""
    base = os.path.basename(os.path.normpath(run_dir))
    match = re.fullmatch(r"lp-(.+)-[A-Za-z0-9]{6}", base)
    return match.group(1) if match else None
