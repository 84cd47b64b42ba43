"""The status page and --lp_status of a Slurm launch, against a real Slurm
(tools/local-slurm.sh start: four fake nodes on this machine).

Submits tests/observe/program with --lp_launch=slurm and checks that the
supervisor's page, printed by the submitting command, lists every node as
serving with its own process id (not srun's), the calls the test made and
the lines the nodes wrote; that --lp_status=RUN_DIR prints the same; that
headless chromium draws every node (when installed); and that a node the
test kills with SIGKILL turns to failed, with its failure. Exits 77 without
a Slurm to talk to, unless LP_REQUIRE_SLURM says this run is meant to have
one; cancels the job and removes its directory on every path.

With LP_SLURM_TEST_HOSTS=1 the Slurm's nodes are test hosts of their own
(tools/test-hosts.sh, tools/local-slurm.sh start --hosts): the nodes listen
on their hosts' addresses, and the checks run on the supervisor's host, as
docs/observability.md says to (its page is on that host's loopback).
"""

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from browser import Browser
from check_status_page import LABELS, checked_dom, logged_in, node_element
from launched import Launched, call, get, program, skip, use_tls_of, wait_until

HTML_LINE = "<img src=x onerror="


def slurm_answers():
    try:
        return subprocess.run(["sinfo", "--noheader"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def job_gone(job):
    listed = subprocess.run(["squeue", "--noheader", f"--jobs={job}", "--format=%T"],
                            capture_output=True, text=True, timeout=20)
    return listed.returncode != 0 or not re.search(r"PENDING|RUNNING|COMPLETING", listed.stdout)


def status_of(run_dir, *flags):
    done = subprocess.run([program(), f"--lp_status={run_dir}", *flags], capture_output=True,
                          text=True, timeout=30)
    return done.returncode, done.stdout, done.stderr


def nodes_of(page, secret):
    status, body = get(page + "lp/v1/status", secret)
    return {n["label"]: n for n in json.loads(body)["nodes"]} if status == 200 else {}


def node_of(pid):
    """The node a process runs: the LP_NODES it started with, unless it is
    the srun that started the node's step (whose environment has it too)."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() == "srun":
                return ""
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return ""
    return next((e[len(b"LP_NODES="):].decode() for e in entries if e.startswith(b"LP_NODES=")), "")


def test_hosts():
    return os.environ.get("LP_SLURM_TEST_HOSTS") == "1"


def go_to_supervisor_host(run_dir):
    """Takes on the network of the host where the job's supervisor runs,
    as `ssh that-host` would: this thread, and every process it starts from
    now on. The supervisor is the process the batch script started, with
    LP_SLURM_RUN_DIR (which it takes out of its environment for its steps)."""
    def supervisor():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"LP_SLURM_RUN_DIR={run_dir}".encode() in f.read().split(b"\0"):
                        return pid
            except OSError:
                pass
        return None
    pid = wait_until("the job's supervisor", supervisor, 60)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), f"setns to the network of process {pid}")
    finally:
        os.close(fd)


def check(launched, scratch):
    run_dir, secret = launched.run_dir(), launched.secret()
    use_tls_of(run_dir)
    if test_hosts():
        go_to_supervisor_host(run_dir)
    assert run_dir.startswith(scratch), run_dir
    page = launched.status_url()
    assert page.startswith("http://127.0.0.1:"), page
    counter = launched.url("counter")
    for _ in range(5):
        call(counter, "add", [2], secret)
    assert get(page + "lp/v1/status")[0] == 401, "the status answered without the secret"

    def listed():
        nodes = nodes_of(page, secret)
        calls = [m["calls"] for m in nodes.get("counter", {}).get("methods", []) if m["name"] == "add"]
        ready = (sorted(nodes) == sorted(LABELS) and all(n["state"] == "serving" for n in nodes.values())
                 and calls == [5] and "add(2)" in nodes["counter"]["last_lines"]
                 and any(HTML_LINE in line for line in nodes["recorder"]["last_lines"])
                 and len(nodes["recorder"].get("series", {}).get("wave", [])) >= 3
                 # Every node answered the page once: until then, its pid is
                 # srun's (the launcher's child), and it has no host.
                 and all(n.get("host") for n in nodes.values()))
        return ready and nodes
    nodes = wait_until("the page: every node serving, the calls counted, the lines shown", listed, 60)
    for label, node in nodes.items():
        assert node_of(node["pid"]) == label, f"{label}: pid {node['pid']} is not the node's process"
        assert node["host"], f"{label}: no host"

    code, out, err = status_of(run_dir, "--lp_json")
    assert code == 0, err
    assert json.loads(out)["policy"] == "slurm", out
    code, table, err = status_of(run_dir)
    assert code == 0, err
    for label in LABELS:
        assert any(line.split()[:2] == [label, "serving"] for line in table.splitlines()), table
    assert "ticks=" in table and secret not in table + launched.output(), "the secret was printed"
    print(f"slurm: --lp_status lists every node serving\n{table}", flush=True)

    binary = shutil.which("chromium")
    profile = tempfile.mkdtemp(prefix="lp-chromium-")
    browser = None
    try:
        if binary:
            browser = Browser(binary, profile)
            logged_in(browser, page, secret)
            dom = checked_dom(browser)
            for label in LABELS:
                assert node_element(dom, label) == "serving", label
            assert "add(2)" in dom, "the page does not show the counter's lines"
        else:
            print("chromium is not installed (apt-get install chromium): the page is not checked in a "
                  "browser", flush=True)

        victim = nodes["workers/1"]["pid"]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        wait_until("the killed node marked failed",
                   lambda: nodes_of(page, secret).get("workers/1", {}).get("state") == "failed", 2)
        print(f"workers/1 (pid {victim}) marked failed {time.monotonic() - killed:.2f} s after the kill",
              flush=True)
        failure = nodes_of(page, secret)["workers/1"]["failure"]
        assert "SIGKILL" in failure, failure
        code, table, err = status_of(run_dir)
        assert code == 0, err
        assert any(line.split()[:2] == ["workers/1", "failed"] for line in table.splitlines()), table
        assert "  failed: killed by signal SIGKILL" in table, table
        if browser:
            browser.wait_for("the page marks workers/1 failed",
                             "document.querySelector('#graph g.node[data-label=\"workers/1\"]')"
                             ".dataset.state === 'failed'", 5)
            assert node_element(checked_dom(browser), "workers/1") == "failed"
    finally:
        if browser:
            browser.close()
        shutil.rmtree(profile, ignore_errors=True)


def exit_on_sigterm(signum, frame):
    """meson test ends a test past its timeout with SIGTERM, which skips every
    `finally` unless it becomes an exception: then the job is cancelled and
    its directory removed as on any other path. A second SIGTERM would cut
    that clean-up short: it is ignored from here on."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def main():
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    if not slurm_answers():
        if os.environ.get("LP_REQUIRE_SLURM"):
            print("no Slurm answers (sinfo failed), but LP_REQUIRE_SLURM is set; start one with "
                  "tools/local-slurm.sh start", flush=True)
            sys.exit(1)
        skip("no Slurm answers (sinfo failed); start a local one with tools/local-slurm.sh start")
    scratch = tempfile.mkdtemp(prefix="lp-slurm-observe-")
    # On test hosts, the nodes on as many hosts as there are, at their addresses.
    where = (["--lp_slurm_host=auto", "--lp_slurm_sbatch=--spread-job"] if test_hosts()
             else ["--lp_slurm_host=127.0.0.1"])
    launched = Launched(f"--lp_slurm_dir={scratch}", *where,
                        "--lp_termination_notice_secs=5", "--lp_status_linger_secs=60", policy="slurm")
    job = None
    try:
        job = launched.wait_for(r"\[lp\] submitted job (\d+)").group(1)
        check(launched, scratch)
    finally:
        launched.stop()  # the submitter stops the job in order
        if job and not job_gone(job):
            subprocess.run(["scancel", job], timeout=20)
        if job:
            wait_until(f"job {job} gone", lambda: job_gone(job), 30)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
