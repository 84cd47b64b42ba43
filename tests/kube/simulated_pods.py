#!/usr/bin/env python3
"""Runs Kubernetes launches in simulated pods (tests/kube/pods.py): the
manifests that --lp_launch=kubernetes --lp_dry_run writes, with TLS, one
network namespace per pod.

    simulated_pods.py CONSUMER_PRODUCERS ACTOR_LEARNER TEST_PROGRAM PYTHON_LEARNER PYTHON \
        PYTHON_MISSING LP_LAUNCHPAD

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
6. python_learner (C++ actors, a Python learner) runs to its result, with
   --lp_python=PYTHON (an interpreter with numpy and cbor2) and an image
   whose environment puts the package launchpad_client on PYTHONPATH and
   whose working directory holds learner.py: every index succeeds, the
   learner's Python process runs in its pod with that interpreter,
   PYTHONPATH and working directory, serves on its socket in sockets/ of
   its pod's emptyDir (the pod holds two processes: the learner's host and
   the learner), and nothing of it is left after. The
   second actor's pod starts only once the program stops and the other
   pods have ended (pods.py --start-late): it joins, is told to stop, and
   exits 0 as well.
7. python_missing (tests/slurm/python_missing.cpp: a Python node whose
   module no PYTHONPATH holds, in a group with 3 restarts): its pod fails
   once with status 123, which a FailIndex rule of its Job names, and the
   coordinator stops the program at once (exit 1), naming node and module.
8. A Launchpad program (tests/launchpad/programs.py's consumer/producers,
   `import launchpad as lp`), launched by its script with
   launch_type='kubernetes' and --lp_dry_run: its pods run LP_LAUNCHPAD,
   which reads the program's description from the Secret's files, and the
   image's python3 (PYTHONPATH naming the checkout's python/). Every index
   succeeds at its first start, every node serves over TLS, the consumer's
   results cross the pods (futures, 22 values type for type, a remote
   error named), and nothing is left: no Python process, no pod's network
   namespace, no description in the script's TMPDIR. Then a Launchpad
   program whose node waits for the stop (programs.py's until_stopped):
   the status table asked in the coordinator's pod (lp-kube status, whose
   lp-launchpad finds the description in the Secret too) shows it serving,
   and a SIGTERM to the coordinator (lp-kube stop) stops it cleanly: the
   node sees the stop, every index succeeds. Skipped without cloudpickle,
   unless LP_REQUIRE_CLOUDPICKLE is set.
9. Nodes that share a pod call each other over their sockets there
   (tests/processes, scenario "bulk_in_one_pod": a mirror and a caller in
   a colocated group, one process in one pod): the caller's 5 echoes of 4 MB
   come back whole, all 5 in shared memory, which only the unix socket
   carries; the node's sockets/ on the pod's emptyDir was 0700 and is empty
   once the pod ends. With --lp_same_host=off: 5 whole, none in shared
   memory, no sockets/.

Needs root, iproute2 and util-linux (tools/test-hosts.sh); exits 77 (skipped)
with a message without them, unless LP_REQUIRE_KUBE_PODS is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
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


def pods_command(binary: str, manifest_dir: Path, work: Path, *options: str) -> list[str]:
    return [sys.executable, str(HERE / "pods.py"), str(manifest_dir), "--binary", binary,
            "--work", str(work / "pods"), "--timeout", "120", *options]


def run_pods(binary: str, manifest_dir: Path, work: Path, *options: str) -> dict:
    result = subprocess.run(pods_command(binary, manifest_dir, work, *options),
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"pods.py failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


def runtimes() -> list[int]:
    """The Python processes of Python nodes in pods: `<interpreter> -m
    launchpad_client.runtime --node=...`, in a network namespace other than
    this process's (a pod's; only a test under /work/.hosts.lock makes
    those)."""
    ours = os.stat("/proc/self/ns/net").st_ino
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if (len(argv) >= 4 and argv[1:3] == [b"-m", b"launchpad_client.runtime"]
                    and os.stat(f"/proc/{entry}/ns/net").st_ino != ours):
                found.append(int(entry))
        except OSError:
            continue  # gone meanwhile
    return found


def what_runtime_has(pid: int) -> dict | None:
    """What a Python node's process was given: its command line, working
    directory, PYTHONPATH and network namespace; None if it is gone."""
    try:
        argv = [w.decode() for w in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if w]
        cwd = os.readlink(f"/proc/{pid}/cwd")
        environ = dict(e.decode().split("=", 1) for e in
                       Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in e)
        net = os.stat(f"/proc/{pid}/ns/net").st_ino
    except (OSError, ValueError):
        return None
    return {"argv": argv, "cwd": cwd, "PYTHONPATH": environ.get("PYTHONPATH"), "net": net}


def run_pods_watching(binary: str, manifest_dir: Path, work: Path,
                      *options: str) -> tuple[dict, dict | None, set[str]]:
    """run_pods, looking meanwhile (every 20 ms) for a Python node's process
    in a pod: what it was given, read as soon as it runs; and for the
    sockets in the pods' emptyDirs (pod.N.sockets/sockets/LABEL.sock)."""
    seen = None
    sockets: set[str] = set()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pods = subprocess.Popen(pods_command(binary, manifest_dir, work, *options),
                                stdout=out, stderr=err)
        deadline = time.monotonic() + 300
        try:
            while pods.poll() is None and time.monotonic() < deadline:
                if seen is None:
                    for pid in runtimes():
                        seen = what_runtime_has(pid) or seen
                sockets.update(str(p.relative_to(work / "pods"))
                               for p in (work / "pods").glob("*.sockets/sockets/*.sock"))
                time.sleep(0.02)
        finally:
            if pods.poll() is None:
                # KeyboardInterrupt: its cleanup ends the pods and takes the
                # test hosts down.
                pods.send_signal(signal.SIGINT)
                try:
                    pods.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pods.kill()
                    pods.wait()
        out.seek(0)
        err.seek(0)
        if pods.returncode != 0:
            sys.exit(f"pods.py failed ({pods.returncode}):\n{err.read().decode(errors='replace')}")
        return json.loads(out.read()), seen, sockets


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
        log = Path(pod["log"]).read_text(errors="replace") if pod["log"] else ""
        print(f"---- {pod['pod']}\n{log[-3000:]}")
    # Last, as a short summary: a test log is often shown by its end only.
    print(f"FAILED: {what} after {report['seconds']} s; coordinator exit {report['coordinator']}; "
          + "; ".join(f"{p['pod']}: {p['outcome']}, exits {p['exits']}" for p in report["pods"]))
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


def python_learner(binary: str, python: str, work: Path) -> None:
    """python_learner's pods, as an image made for Python nodes runs them.
    What such an image needs (beside the binary, as for any program):
    - the interpreter: python3 with what the node's module imports (numpy
      here) and cbor2 (python3-numpy, python3-cbor2), named by --lp_python,
      which the manifests pass on in each container's command, or found as
      python3 on the image's PATH;
    - the package launchpad_client: the checkout's python/ on the image's
      PYTHONPATH (ENV PYTHONPATH=...), or installed in the interpreter's
      site-packages;
    - the node's module (learner.py): in the image's WORKDIR, which
      `python -m` puts first on sys.path, or on PYTHONPATH.
    The manifests carry none of it, and need not: the workstation's paths
    mean nothing in the image. (A group's env(), which they do carry, could
    set PYTHONPATH for a group's nodes; the learner is in none.)
    Here the image's ENV and WORKDIR are pods.py's --image-env and
    --workdir, over this machine's file system: the example's directory
    and the checkout's python/. The node's host writes no file for it: its
    spec, with the secret and key, comes over a socket."""
    example = ROOT / "examples" / "python_learner"
    package = ROOT / "python"
    manifest_dir = manifests(binary, work, f"--lp_python={python}")
    report, seen, sockets = run_pods_watching(
        binary, manifest_dir, work, "--image-env", f"PYTHONPATH={package}",
        "--workdir", str(example), "--start-late", "actors:1")
    check(report["coordinator"] == 0, "python_learner: the coordinator exits 0", report)
    check(all(p["outcome"] == "succeeded" and p["exits"] == [0] for p in report["pods"]),
          "python_learner: every index of every Job succeeds at its first start", report)
    check("learner serving at https://" in log_of(report, "nodes-0"),
          "python_learner: the learner serves over TLS in its pod", report)
    check(any("average reward" in log_of(report, f"actors-{i}") for i in range(2)),
          "python_learner: an actor learned", report)
    check(seen is not None, "python_learner: the learner's Python process was seen running", report)
    check(seen["argv"] == [python, "-m", "launchpad_client.runtime",
                           "--node=python_learner/learner"],
          f"python_learner: the node runs --lp_python's interpreter, its spec from its host "
          f"({seen['argv']})", report)
    check(seen["cwd"] == str(example.resolve()),
          f"python_learner: in the image's working directory ({seen['cwd']})", report)
    check(seen["PYTHONPATH"] == str(package),
          f"python_learner: with the image's PYTHONPATH ({seen['PYTHONPATH']})", report)
    check(seen["net"] != os.stat("/proc/self/ns/net").st_ino,
          "python_learner: in its pod's network namespace", report)
    # The pod holds two processes: the learner's host and the learner.
    learner_pod = next(p["pod"] for p in report["pods"] if p["pod"].endswith("-nodes-0"))
    check(f"{learner_pod}.1.sockets/sockets/learner.sock" in sockets,
          f"python_learner: the learner served on its socket in its pod's emptyDir ({sockets})",
          report)
    check(not runtimes(), "python_learner: no Python process is left", report)
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    check(not re.search(r"^lp-h[0-9]+", namespaces, re.M),
          "python_learner: no pod's network namespace is left", report)


def python_missing(binary: str, python: str, work: Path) -> None:
    """A Python node whose image cannot have its class (a module on no
    PYTHONPATH), in a group with restarts: its pod fails once, with the
    status no restart mends, its Job does not start it again, and the
    coordinator stops the program at once, naming the node and the module."""
    work.mkdir(parents=True)
    report = run_pods(binary, manifests(binary, work, f"--lp_python={python}"), work,
                      "--image-env", f"PYTHONPATH={ROOT / 'python'}")
    ghost = next(p for p in report["pods"] if p["pod"].endswith("-ghosts-0"))
    check(ghost["exits"] == [123] and ghost["outcome"] == "failed",
          "python_missing: the Python node's pod fails once, its index not started again", report)
    check(report["coordinator"] == 1, "python_missing: the coordinator exits 1", report)
    coordinator = log_of(report, "coordinator-0")
    check("ghosts/0" in coordinator and "lp_test_no_such_module" in coordinator
          and "restarts)" not in coordinator,
          "python_missing: the coordinator names the node and the module, and restarts nothing",
          report)


def launchpad_manifests(launcher: str, python: str, work: Path, name: str,
                        result: Path) -> Path:
    """The manifests a Launchpad script (tests/launchpad/programs.py NAME)
    writes with launch_type='kubernetes' and --lp_dry_run, its TMPDIR
    work/tmp."""
    tmp = work / "tmp"  # the script's TMPDIR: where its description goes
    tmp.mkdir(parents=True)
    out = work / "manifests"
    env = dict(os.environ, TMPDIR=str(tmp), LP_LAUNCHPAD_LAUNCHER=launcher,
               PYTHONPATH=str(ROOT / "python"), PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([python, str(ROOT / "tests" / "launchpad" / "programs.py"), name,
                    "kubernetes", str(result), f"--lp_kube_image={IMAGE}", "--lp_dry_run",
                    f"--lp_kube_dir={out}"],
                   check=True, stdout=subprocess.DEVNULL, env=env, timeout=120)
    found = list(out.glob("*/launch.yaml"))
    assert len(found) == 1, f"the Launchpad script wrote {found}"
    return found[0].parent


def launchpad_program(launcher: str, python: str, work: Path) -> None:
    """A Launchpad program's pods: its script writes the manifests, with
    the program's description in the Secret, and the pods run lp-launchpad,
    as an image made for Launchpad programs runs it (docs/kubernetes.md,
    "An image for Launchpad programs"): python3 with numpy, cbor2 and
    cloudpickle on the image's PATH, and the packages launchpad and
    launchpad_client on its PYTHONPATH; the script's own classes travel
    pickled in the description (programs.py runs as __main__)."""
    if subprocess.run([python, "-c", "import cloudpickle"], capture_output=True).returncode:
        if os.environ.get("LP_REQUIRE_CLOUDPICKLE"):
            sys.exit(f"launchpad: {python} has no cloudpickle, and LP_REQUIRE_CLOUDPICKLE is set")
        print(f"SKIPPED: launchpad: {python} has no cloudpickle (python3-cloudpickle)")
        return
    result = work / "result.json"
    manifest_dir = launchpad_manifests(launcher, python, work, "consumer_producers", result)
    tmp = work / "tmp"
    report, seen, _ = run_pods_watching(launcher, manifest_dir, work, "--image-env",
                                        f"PYTHONPATH={ROOT / 'python'}")
    check(report["coordinator"] == 0, "launchpad: the coordinator exits 0", report)
    check(all(p["outcome"] == "succeeded" and p["exits"] == [0] for p in report["pods"]),
          "launchpad: every index of every Job succeeds at its first start", report)
    check(all(f"{label} serving at https://" in log_of(report, pod)
              for label, pod in (("producer/0", "producer-0"), ("producer/1", "producer-1"),
                                 ("producer/2", "producer-2"), ("consumer/0", "consumer-0"))),
          "launchpad: every node serves over TLS in its pod", report)
    seen_result = json.loads(result.read_text()) if result.exists() else {}
    check(seen_result.get("work") == [1000, 101, 1002],
          f"launchpad: the consumer's futures got each producer's work "
          f"({seen_result.get('work')})", report)
    echoed = seen_result.get("echo", [])
    check(len(echoed) == 11 and echoed[8] == {"type": "ndarray", "dtype": "float32",
                                              "value": [0.0, 1.0, 2.0, 3.0, 4.0]}
          and echoed[5] == {"type": "bytes", "dtype": None, "value": "00ff"}
          and seen_result.get("kept") == [True] * 11
          and seen_result.get("named") == [True, True],
          "launchpad: 22 values and two calls with keywords crossed the pods type for type",
          report)
    check(str(seen_result.get("unsendable", "")).startswith(
              "RemoteError: producer/0.unsendable failed"),
          "launchpad: a remote error reached the consumer, named", report)
    check(seen is not None and seen["argv"][0] == "python3"
          and seen["argv"][1:3] == ["-m", "launchpad_client.runtime"]
          and seen["PYTHONPATH"] == str(ROOT / "python")
          and seen["net"] != os.stat("/proc/self/ns/net").st_ino,
          f"launchpad: a node ran on the image's python3 and PYTHONPATH, in its pod ({seen})",
          report)
    check(not runtimes(), "launchpad: no Python process is left", report)
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    check(not re.search(r"^lp-h[0-9]+", namespaces, re.M),
          "launchpad: no pod's network namespace is left", report)
    check(not any(tmp.iterdir()), "launchpad: the script's description is gone", report)

    # Until stopped: lp-kube status and lp-kube stop.
    waiter = work / "waiter"
    waiter.mkdir()
    manifest_dir = launchpad_manifests(launcher, python, work / "until", "until_stopped", waiter)
    report = run_pods(launcher, manifest_dir, work / "until", "--image-env",
                      f"PYTHONPATH={ROOT / 'python'}", "--stop-when", "waiter:0")
    check(report["stopped"] and re.search(r"waiter/0 +serving ", report["status"]) is not None,
          f"launchpad until_stopped: the status table, asked in the coordinator's pod, shows "
          f"the node serving:\n{report['status']}", report)
    check(report["coordinator"] == 0
          and all(p["outcome"] == "succeeded" and p["exits"] == [0] for p in report["pods"]),
          "launchpad until_stopped: a SIGTERM to the coordinator stops the program cleanly",
          report)
    check(sorted(p.name for p in waiter.iterdir()) == ["started", "stopped"],
          "launchpad until_stopped: the node saw the stop (lp.wait_for_stop returned)", report)


def one_pod(program: str, work: Path) -> None:
    """Scenario bulk_in_one_pod, with the sockets in the pod (the default)
    and without (--lp_same_host=off)."""
    for same_host in ("on", "off"):
        where = work / same_host
        where.mkdir(parents=True)
        report = run_pods(program, manifests(program, where, "--scenario=bulk_in_one_pod",
                                             f"--dir={where}", f"--lp_same_host={same_host}"),
                          where)
        name = f"one pod, --lp_same_host={same_host}"
        check(report["coordinator"] == 0
              and all(p["outcome"] == "succeeded" and p["exits"] == [0] for p in report["pods"]),
              f"{name}: the coordinator exits 0, the pair's index succeeds", report)
        calls = (where / "bulk.calls").read_text() if (where / "bulk.calls").exists() else ""
        expected = "5 5" if same_host == "on" else "5 0"
        check(calls == expected,
              f"{name}: of the 5 echoes, whole and in shared memory: '{calls}' (want '{expected}')",
              report)
        pod = next(p for p in report["pods"] if p["pod"].endswith("-pair-0"))
        sockets = Path(pod["sockets"]) / "sockets"
        if same_host == "on":
            check(sockets.is_dir() and (sockets.stat().st_mode & 0o777) == 0o700
                  and not any(sockets.iterdir()),
                  f"{name}: sockets/ on the pod's emptyDir, 0700, empty after the pod", report)
        else:
            check(not sockets.exists(), f"{name}: no sockets/", report)


def main() -> int:
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    consumer_producers, actor_learner, program, learner, python, missing, launcher = sys.argv[1:]
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

        one_pod(program, work / "one_pod")
        python_learner(learner, python, work / "pl")
        python_missing(missing, python, work / "pm")
        launchpad_program(launcher, python, work / "lp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
