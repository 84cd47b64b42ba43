"""What a launch's run directory tells a client: the secret and, from the
lines the nodes print, where each node serves.

A launch (local_mt, local_mp, Slurm) makes a run directory holding the file
`secret` (docs/launching.md#the-run-directory). Every node prints

    [lp] <label> serving at http://127.0.0.1:40123

as it starts serving: into its log file under `<run dir>/logs` with
`--lp_terminal=files` or `tmux`, else to the launcher's output, and appends
`<label> <url>` to the run directory's file `nodes`. Addresses come from, in
this order:

1. `output`, when given: the launcher's output saved to a file, a log
   directory (`--lp_log_dir`), or lines of text;
2. the `nodes` file in the run directory, of lines `<label> <url>`;
3. the node logs in `<run dir>/logs`.

A restarted node prints its new address, so the last line for a label wins.
"""

import os
import re

SERVING = re.compile(r"\[lp\] (\S+) serving at (https?://\S+)")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # the launcher colours labels on a terminal


def read_secret(run_dir):
    """The launch's secret, from `<run_dir>/secret`; None for a launch
    without one (--lp_insecure makes no file)."""
    if not os.path.isdir(run_dir):
        raise FileNotFoundError(f"no run directory {run_dir}: has the program ended? (a launch "
                                "removes its run directory when it ends)")
    path = os.path.join(run_dir, "secret")
    try:
        with open(path, encoding="ascii") as f:
            secret = f.read().strip()
    except FileNotFoundError:
        return None
    if not secret:
        raise ValueError(f"{path} is empty")
    return secret


def addresses_in_lines(lines, found=None):
    """Label -> URL of every "serving at" line, the last one per label."""
    found = {} if found is None else found
    for line in lines:
        match = SERVING.search(COLOUR.sub("", line))
        if match:
            found[match.group(1)] = match.group(2).rstrip("/")
    return found


def _lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def _addresses_in_logs(directory):
    found = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith(".log") and os.path.isfile(path):
            addresses_in_lines(_lines_of(path), found)
    return found


def _addresses_in_nodes_file(path):
    found = {}
    for line in _lines_of(path):
        parts = line.split()
        if len(parts) == 2:
            found[parts[0]] = parts[1].rstrip("/")
    return found


def node_addresses(run_dir, output=None):
    """Label -> URL of the nodes this run directory (or `output`) names."""
    if output is not None:
        if isinstance(output, (str, os.PathLike)):
            if os.path.isdir(output):
                return _addresses_in_logs(output)
            return addresses_in_lines(_lines_of(output))
        if isinstance(output, bytes):
            output = output.decode("utf-8", "replace").splitlines()
        return addresses_in_lines(output)  # lines: a list, an open file ...
    nodes_file = os.path.join(run_dir, "nodes")
    if os.path.isfile(nodes_file):
        return _addresses_in_nodes_file(nodes_file)
    logs = os.path.join(run_dir, "logs")
    if os.path.isdir(logs):
        return _addresses_in_logs(logs)
    return {}


def program_name(run_dir):
    """The program's name from a run directory named lp-<program>-XXXXXX."""
    base = os.path.basename(os.path.normpath(run_dir))
    match = re.fullmatch(r"lp-(.+)-[A-Za-z0-9]{6}", base)
    return match.group(1) if match else None
