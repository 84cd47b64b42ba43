#!/usr/bin/env python3
"""tools/lp-kube against a kubectl stand-in that records its arguments (no
cluster is reachable here): each command asks kubectl for what
docs/kubernetes.md says, and refuses a launch name that is not one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

LP_KUBE = Path(__file__).resolve().parent.parent.parent / "tools" / "lp-kube"

# Records each call as a JSON line; answers `get job` as kubectl's jsonpath would.
STAND_IN = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["RECORD"], "a") as record:
    record.write(json.dumps(sys.argv[1:]) + "\\n")
if "get" in sys.argv and "job" in sys.argv:
    print("/usr/local/bin/program\\n--lp_launch=kubernetes\\n--scenario=a b")
"""


def run(work: Path, *arguments: str) -> tuple[int, list[list[str]], str]:
    record = work / "record"
    record.unlink(missing_ok=True)
    env = dict(os.environ, KUBECTL=str(work / "kubectl"), RECORD=str(record))
    done = subprocess.run([str(LP_KUBE), *arguments], env=env, capture_output=True, text=True,
                          timeout=30)
    calls = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return done.returncode, calls, done.stderr


def expect(got, wanted, what: str) -> None:
    if got != wanted:
        sys.exit(f"FAILED: {what}\n  got:    {got}\n  wanted: {wanted}")
    print(f"ok: {what}")


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "kubectl").write_text(STAND_IN)
        (work / "kubectl").chmod(0o755)
        launch = "lp-demo-x1y2z"
        ns = ["--namespace", "ml"]

        status, calls, _ = run(work, "-n", "ml", "status", launch)
        expect((status, calls), (0, [
            ns + ["get", "job", f"{launch}-coordinator", "-o",
                  "jsonpath={range .spec.template.spec.containers[0].command[*]}{@}{\"\\n\"}{end}"],
            ns + ["exec", f"job/{launch}-coordinator", "--", "/usr/local/bin/program",
                  "--lp_launch=kubernetes", "--scenario=a b", f"--lp_status=/tmp/lp-kube-{launch}"],
        ]), "status runs the pod's binary with its arguments and --lp_status, in the coordinator")

        status, calls, _ = run(work, "status", launch, "--json")
        expect(calls[-1][-1], "--lp_json", "status --json asks for the JSON")

        status, calls, _ = run(work, "logs", launch, "actors", "2")
        expect((status, calls), (0, [[
            "logs", "--selector",
            f"launchpad.dev/launch={launch},launchpad.dev/group=actors,"
            "batch.kubernetes.io/job-completion-index=2",
            "--prefix", "--tail=-1", "--max-log-requests=256"]]),
            "logs of one pod select its launch, group and index")

        status, calls, _ = run(work, "stop", launch)
        expect((status, calls), (0, [["exec", f"job/{launch}-coordinator", "--", "sh", "-c",
                                      "kill -TERM 1"]]),
               "stop sends SIGTERM to the coordinator")

        status, calls, _ = run(work, "delete", launch)
        expect((status, calls), (0, [["delete", "job,service,secret", "--selector",
                                      f"launchpad.dev/launch={launch}"]]),
               "delete removes the launch's objects by its label")

        status, calls, error = run(work, "stop", "Bad Name; rm -rf /")
        expect((status, calls, "give the launch's name" in error), (2, [], True),
               "a name that is no launch's is refused before kubectl runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
