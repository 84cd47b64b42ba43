#!/usr/bin/env python3
"""Runs Kubernetes launches in simulated pods (tests/kube/pods.py): the
manifests that --lp_launch=kubernetes --lp_dry_run writes, with TLS, one
network namespace per pod.

    simulated_pods.py CONSUMER_PRODUCERS ACTOR_LEARNER TEST_PROGRAM

1. consumer_producers runs to its result: the coordinator exits 0, every
   index of every Job succeeds, and the consumer prints its sum.
2. actor_learner runs to its result the same way, and learns.
3. A node of a group with no restarts, killed with SIGKILL once it serves:
   its index fails (backoffLimitPerIndex 0), the coordinator finds it gone,
   stops the others (they exit 0) and exits 1, naming the node.
4. The coordinator, killed once every node serves: the node pods stop by
   themselves after 30 s without an answer from it, and exit 0.
5. A node of a group with restarts (tests/processes, scenario "flaky",
   max_restarts 3) crashes on its first two starts and is killed once it
   serves: the Job starts it again each time, and once it serves the fourth
   time, the status table asked in the coordinator's pod shows it, and a
   SIGTERM to the coordinator (lp-kube stop) stops the program cleanly.

Needs root, iproute2 and util-linux (tools/test-hosts.sh); exits 77 (skipped)
with a message without them, unless LP_REQUIRE_KUBE_PODS is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
IMAGE = "registry.invalid/launchpad-test:1"


def skip(why: str) -> None:
    if os.environ.get("LP_REQUIRE_KUBE_PODS"):
        sys.exit(f"simulated pods: {why}, and LP_REQUIRE_KUBE_PODS is set")
    print(f"SKIPPED: simulated pods: {why}")
    sys.exit(77)


def manifests(binary: str, work: Path, *arguments: str) -> Path:
    out = work / "manifests"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([binary, "--lp_launch=kubernetes", f"--lp_kube_image={IMAGE}", "--lp_dry_run",
                    f"--lp_kube_dir={out}", *arguments], check=True, stdout=subprocess.DEVNULL)
    found = list(out.glob("*/launch.yaml"))
    assert len(found) == 1, f"the dry run wrote {found}"
    return found[0].parent


def run_pods(binary: str, manifest_dir: Path, work: Path, *options: str) -> dict:
    result = subprocess.run([sys.executable, str(HERE / "pods.py"), str(manifest_dir),
                             "--binary", binary, "--work", str(work / "pods"), "--timeout", "120",
                             *options], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"pods.py failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


def log_of(report: dict, pod_suffix: str) -> str:
    for pod in report["pods"]:
        if pod["pod"].endswith(pod_suffix):
            return Path(pod["log"]).read_text(errors="replace")
    raise AssertionError(f"no pod *{pod_suffix} in {[p['pod'] for p in report['pods']]}")


def check(condition: bool, what: str, report: dict) -> None:
    if condition:
        print(f"ok: {what}")
        return
    print(f"FAILED: {what}\n{json.dumps(report, indent=1)}")
    for pod in report["pods"]:
        print(f"---- {pod['pod']}\n{Path(pod['log']).read_text(errors='replace')[-3000:]}")
    sys.exit(1)


def to_result(binary: str, work: Path, result_line: str, pod_with_result: str) -> None:
    report = run_pods(binary, manifests(binary, work), work)
    name = Path(binary).name
    check(report["coordinator"] == 0, f"{name}: the coordinator exits 0", report)
    check(all(p["outcome"] == "succeeded" and p["exits"] == [0] for p in report["pods"]),
          f"{name}: every index of every Job succeeds at its first start", report)
    coordinator = log_of(report, "coordinator-0")
    check("rendezvous at https://" in coordinator, f"{name}: the rendezvous speaks TLS", report)
    check(result_line in log_of(report, pod_with_result), f"{name}: '{result_line}'", report)


def main() -> int:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    consumer_producers, actor_learner, program = sys.argv[1:]
    if os.geteuid() != 0:
        skip("not root (network namespaces need it)")
    for tool in ("ip", "nsenter", "unshare", "mount", "hostname"):
        if not shutil.which(tool):
            skip(f"no {tool} (apt-get install iproute2 util-linux)")
    try:
        import yaml  # noqa: F401
    except ImportError:
        skip("no PyYAML (apt-get install python3-yaml)")
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        skip("'ip netns' does not work here")

    with tempfile.TemporaryDirectory(prefix="lp-kube-pods-") as scratch:
        work = Path(scratch)
        to_result(consumer_producers, work / "cp", "sum of squares below 1000: 332833500",
                  "nodes-0")
        to_result(actor_learner, work / "al", "average return: learned policy", "nodes-1")

        # A group without restarts: the node killed is the program's failure.
        sleepers = work / "sleepers"
        sleepers.mkdir()
        report = run_pods(program, manifests(program, sleepers, "--scenario=sleepers",
                                             f"--dir={sleepers}"),
                          sleepers, "--kill", "sleepers:1")
        check(report["killed"], "sleepers: sleepers/1 was killed once it served", report)
        check(report["coordinator"] == 1, "sleepers: the coordinator exits 1", report)
        outcome = {i: next(p["outcome"] for p in report["pods"] if p["pod"].endswith(f"sleepers-{i}"))
                   for i in range(3)}
        check(outcome == {0: "succeeded", 1: "failed", 2: "succeeded"},
              "sleepers: the killed index fails, the others end cleanly", report)
        check("the program failed: node sleepers/1 failed: its pod ended without a word"
              in log_of(report, "coordinator-0"),
              "sleepers: the coordinator names the node and why", report)

        # The coordinator lost: the nodes end by themselves.
        lost = work / "lost"
        lost.mkdir()
        report = run_pods(program, manifests(program, lost, "--scenario=sleepers", f"--dir={lost}"),
                          lost, "--kill", "coordinator")
        check(report["killed"], "coordinator lost: killed once every node served", report)
        check(all(p["outcome"] == "succeeded" for p in report["pods"][1:]),
              "coordinator lost: every node pod ends by itself, with 0", report)
        check("has not answered for 30 s" in log_of(report, "sleepers-0"),
              "coordinator lost: the nodes say why they stop", report)

        # A group with restarts: the Job starts the index again.
        flaky = work / "flaky"
        flaky.mkdir()
        report = run_pods(program, manifests(program, flaky, "--scenario=flaky", f"--dir={flaky}"),
                          flaky, "--kill", "flaky:0", "--stop-when", "flaky:0")
        pod = next(p for p in report["pods"] if p["pod"].endswith("-flaky-0"))
        check(pod["exits"] == [3, 3, -9, 0] and pod["outcome"] == "succeeded",
              "flaky: two crashes and a kill, each started again, then a clean end", report)
        check(report["coordinator"] == 0, "flaky: the coordinator exits 0", report)
        check(re.search(r"flaky/0 +serving +[0-9]+ +1 ", report["status"]) is not None,
              "flaky: the status table, asked in the coordinator's pod, shows it serving after "
              "1 restart", report)
        check("flaky/0 failed (its pod ended without a word" in log_of(report, "coordinator-0"),
              "flaky: the coordinator counts the kill against the group's restarts", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
