"""Tests of examples/agent (docs/agent.md), run by meson under Debian's
python3 with the agent's binary:

    check_agent.py AGENT --learns    the agent learns: the learner reports an
                                     average return of --target (150) over
                                     the last 100 episodes within
                                     --max_seconds (240) of training
    check_agent.py AGENT --resumes   a kill -9 of the learner mid-training:
                                     its node restarts, restores its last
                                     checkpoint (update > 0) and the agent goes
                                     on to learn, while the replay node, another
                                     process, keeps what it holds (same pid, no
                                     restart, its samples count on)

Both launch local_mp with --lp_python=/usr/bin/python3 (or $LP_TEST_PYTHON)
and a checkpoint directory of their own, and end what they started. Exit 77
(skipped) with the reason when that Python has no torch, numpy or cbor2.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

PYTHON = os.environ.get("LP_TEST_PYTHON", "/usr/bin/python3")
SKIP = 77
LEARNER_LINE = re.compile(r"learner: (?P<why>.*?) after (?P<steps>\d+) env steps, .* in "
                          r"(?P<seconds>[\d.]+) s of training")
RESTORED = re.compile(r"learner: restored at update (?P<update>\d+)")
SECRET_LINE = re.compile(r"\[lp\] the launch's secret is in (?P<dir>\S+)/secret")


def needs():
    probe = subprocess.run([PYTHON, "-c", "import torch, numpy, cbor2"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: {PYTHON} cannot import torch, numpy and cbor2 (Debian: apt-get install "
              f"python3-torch python3-numpy python3-cbor2): {probe.stderr.strip().splitlines()[-1:]}")
        sys.exit(SKIP)


class Agent:
    """The agent under local_mp; its output lines are collected as they come."""

    def __init__(self, binary, checkpoints, *flags, status_page=False):
        self.lines = []
        self.changed = threading.Condition()
        command = [binary, "--lp_launch=local_mp", f"--lp_python={PYTHON}",
                   f"--lp_checkpoint_dir={checkpoints}", *flags]
        if not status_page:
            command.append("--lp_status_port=off")
        print("$", " ".join(command), flush=True)
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_for(self, pattern, timeout):
        """The first match of `pattern` in the output, within `timeout` s."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for line in self.lines:
                    m = re.search(pattern, line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None and not self._reading():
                    return None
                self.changed.wait(min(left, 1.0))

    def _reading(self):
        return not self.process.stdout.closed and self.process.poll() is None

    def finish(self, timeout):
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"check_agent: the agent did not end within {timeout} s; killing it", flush=True)
            return None

    def kill(self):
        if self.process.poll() is None:
            # Its own session: the launcher, the node processes and their children.
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()


def status(binary, run_dir):
    """The launch's nodes by label, from `agent --lp_status=RUN_DIR --lp_json`
    (its status page's figures): the pid of a Python node is its Python
    process's."""
    out = subprocess.run([binary, f"--lp_status={run_dir}", "--lp_json"], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        return {}
    return {n["label"]: n for n in json.loads(out.stdout)["nodes"]}


def metric(run_dir, label, name):
    with open(os.path.join(run_dir, "secret")) as f:
        secret = f.read().strip()
    urls = dict(line.split() for line in open(os.path.join(run_dir, "nodes")) if len(line.split()) == 2)
    request = urllib.request.Request(urls[label] + "/lp/v1/metrics",
                                     headers={"Authorization": "Bearer " + secret})
    for line in urllib.request.urlopen(request, timeout=10).read().decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def learns(binary, target, max_seconds):
    with tempfile.TemporaryDirectory(prefix="agent-test-") as checkpoints:
        agent = Agent(binary, checkpoints, f"--target={target}", f"--max_seconds={max_seconds}")
        try:
            status_code = agent.finish(max_seconds + 240)
        finally:
            agent.kill()
    m = next((LEARNER_LINE.search(l) for l in agent.lines if LEARNER_LINE.search(l)), None)
    if status_code != 0 or m is None:
        sys.exit(f"check_agent: the agent ended with status {status_code} and "
                 f"{'no learner report' if m is None else repr(m.group(0))}")
    if not m.group("why").startswith("reached"):
        sys.exit(f"check_agent: the agent did not learn: {m.group(0)}")
    print(f"check_agent: learned to an average return of {target} in {m.group('steps')} env steps, "
          f"{m.group('seconds')} s of training")


def resumes(binary, target, max_seconds):
    target = max(target, 475.0)
    with tempfile.TemporaryDirectory(prefix="agent-test-") as checkpoints:
        # One actor and a short checkpoint period: the learner has saved
        # before it is killed, long before it could reach the target.
        agent = Agent(binary, checkpoints, "--actors=1", f"--target={target}",
                      f"--max_seconds={max_seconds}", "--checkpoint_seconds=1", status_page=True)
        try:
            m = agent.wait_for(SECRET_LINE.pattern, 120)
            if m is None:
                sys.exit("check_agent: the agent printed no run directory")
            run_dir = m.group("dir")
            # Killed once it has made 30 updates and saved since (every 1 s):
            # far from the target, which takes hundreds.
            deadline = time.monotonic() + 180
            while True:
                if time.monotonic() > deadline or agent.process.poll() is not None:
                    sys.exit("check_agent: the learner made no 30 updates")
                try:
                    if (metric(run_dir, "learner/0", "updates") or 0) >= 30:
                        break
                except (OSError, KeyError):
                    pass  # not serving yet
                time.sleep(0.2)
            time.sleep(1.5)
            nodes = status(binary, run_dir)
            learner_pid, replay_pid = nodes["learner/0"]["pid"], nodes["replay"]["pid"]
            samples_before = metric(run_dir, "replay", "replay_unrolls_samples_total")
            print(f"check_agent: kill -9 of the learner (pid {learner_pid}); the replay node "
                  f"(pid {replay_pid}) has served {samples_before:.0f} samples", flush=True)
            os.kill(learner_pid, signal.SIGKILL)
            restored = agent.wait_for(RESTORED.pattern, 180)
            if restored is None:
                sys.exit("check_agent: the learner did not restore a checkpoint after its kill -9")
            if int(restored.group("update")) <= 0:
                sys.exit(f"check_agent: the learner restored an empty checkpoint: {restored.group(0)}")
            if agent.wait_for(LEARNER_LINE.pattern, max_seconds + 120) is None:
                sys.exit("check_agent: the restored learner did not report")
            nodes = status(binary, run_dir)
            replay = nodes.get("replay", {})
            samples_after = None
            try:
                samples_after = metric(run_dir, "replay", "replay_unrolls_samples_total")
            except OSError:
                pass  # the program may have stopped already
            status_code = agent.finish(120)
        finally:
            agent.kill()
    m = next((LEARNER_LINE.search(l) for l in agent.lines if LEARNER_LINE.search(l)), None)
    if status_code != 0 or m is None or not m.group("why").startswith("reached"):
        sys.exit(f"check_agent: after the restore the agent ended with status {status_code}: "
                 f"{m.group(0) if m else 'no learner report'}")
    if replay and (replay.get("pid") != replay_pid or replay.get("restarts", 0) != 0):
        sys.exit(f"check_agent: the replay node restarted too: {replay}")
    if samples_after is not None and samples_after <= samples_before:
        sys.exit(f"check_agent: the replay node's samples went from {samples_before} to {samples_after}")
    print(f"check_agent: restored at update {restored.group('update')} and learned on "
          f"({m.group(0)}); the replay node kept its process (pid {replay_pid})")


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("--learns", "--resumes"):
        sys.exit(__doc__)
    needs()
    binary, mode = sys.argv[1], sys.argv[2]
    options = dict(a.lstrip("-").split("=", 1) for a in sys.argv[3:])
    target = float(options.get("target", 150))
    max_seconds = float(options.get("max_seconds", 240))
    (learns if mode == "--learns" else resumes)(binary, target, max_seconds)


if __name__ == "__main__":
    main()
