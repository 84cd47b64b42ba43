"""Nothing a launch made is left after it ends, however it ends (issue 50).

Each launch runs in a mount and a PID namespace of its own (`unshare`, as
root), with /tmp and /dev/shm empty tmpfs mounts: what is left in them
after the launch has ended is the launch's, and so is every process left
in its PID namespace. Listed before and after each way of ending, under
local_mt and local_mp, with a Python node beside C++ ones:

- a clean stop (SIGTERM to the launcher);
- a health kill (a Python run() silent past its group's health_timeout,
  local_mp: the launches of processes watch health);
- a node crash (the Python node's process killed with SIGKILL);
- a SIGKILL of the launcher (the reaper clears the run directory).

Run by meson (suite python_nodes) with /usr/bin/python3; it exits 77
(skipped) without root or unshare. Needs LP_PYTHON_NODES_PROGRAM,
LP_TEST_PYTHON and PYTHONPATH, as meson sets them.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

SKIP = 77
ENDINGS = ("clean stop", "health kill", "node crash", "launcher SIGKILL")


# --- Inside the namespaces (PID 1 there). ----------------------------------

def listing():
    """Every entry under /tmp and /dev/shm, as paths."""
    found = []
    for top in ("/tmp", "/dev/shm"):
        for parent, dirs, files in os.walk(top):
            found += [os.path.join(parent, name) for name in dirs + files]
    return sorted(found)


def others():
    """The command lines of the processes of this PID namespace but this one."""
    left = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                with open(f"/proc/{name}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue  # gone meanwhile
            if state != "Z":
                left.append(b" ".join(argv).decode(errors="replace").strip())
    return left


def reap():
    """PID 1 reaps every orphan of the namespace (the reaper is one)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def runtimes():
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if b"launchpad_client.runtime" in f.read():
                        pids.append(int(name))
            except OSError:
                pass
    return pids


def inside(ending, command):
    for top in ("/tmp", "/dev/shm"):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", top], check=True)
    before = listing()
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    output = []
    reader = threading.Thread(target=lambda: output.extend(
        line.decode(errors="replace") for line in launcher.stdout), daemon=True)
    reader.start()

    def wait_for(text, limit=90):
        give_up = time.monotonic() + limit
        while not any(text in line for line in output):
            if time.monotonic() > give_up or launcher.poll() is not None:
                return False
            time.sleep(0.05)
        return True

    served = wait_for("learner serving at") if ending != "health kill" else True
    if served and ending == "clean stop":
        launcher.send_signal(signal.SIGTERM)
    elif served and ending == "launcher SIGKILL":
        launcher.kill()
    elif served and ending == "node crash":
        for pid in runtimes():
            os.kill(pid, signal.SIGKILL)
    try:
        status = launcher.wait(timeout=120)
    except subprocess.TimeoutExpired:
        launcher.kill()
        status = "did not end"
    # What it left may take a moment to go (the reaper runs once the
    # launcher is gone): up to 20 s.
    give_up = time.monotonic() + 20
    while True:
        reap()
        files, processes = [p for p in listing() if p not in before], others()
        if (not files and not processes) or time.monotonic() > give_up:
            break
        time.sleep(0.05)
    reader.join(timeout=5)
    print(json.dumps({"served": served, "status": status, "before": before, "files": files,
                      "processes": processes, "output": "".join(output)[-6000:]}))
    # PID 1's end takes the namespace's processes with it, if any was left.


# --- The test, outside. ------------------------------------------------------

def env(name):
    value = os.environ.get(name)
    if not value:
        print(f"SKIP: {name} is not set; run through `meson test`")
        sys.exit(SKIP)
    return value


class Leftovers(unittest.TestCase):
    def launch(self, policy, ending):
        """The report of one launch of python_nodes_program, in namespaces
        of its own."""
        program = env("LP_PYTHON_NODES_PROGRAM")
        scenario = "stuck" if ending == "health kill" else "calls"
        command = [program, f"--scenario={scenario}", f"--lp_launch={policy}",
                   f"--lp_python={env('LP_TEST_PYTHON')}"]
        done = subprocess.run(
            ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private",
             sys.executable, os.path.abspath(__file__), "--inside", ending, "--"] + command,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        lines = done.stdout.strip().splitlines()
        self.assertTrue(lines, f"no report from inside the namespaces: {done.stderr}")
        return json.loads(lines[-1])

    def test_nothing_is_left_however_the_launch_ends(self):
        expected = {"clean stop": 0, "health kill": 1, "node crash": 1,
                    "launcher SIGKILL": -signal.SIGKILL}
        for policy in ("local_mt", "local_mp"):
            for ending in ENDINGS:
                if ending == "health kill" and policy == "local_mt":
                    continue  # the launches of processes watch health
                with self.subTest(policy=policy, ending=ending):
                    report = self.launch(policy, ending)
                    why = f"{policy}, {ending}:\n{report['output']}"
                    self.assertEqual(report["before"], [], why)
                    self.assertTrue(report["served"], why)
                    self.assertEqual(report["status"], expected[ending], why)
                    self.assertEqual(report["files"], [], why)
                    self.assertEqual(report["processes"], [], why)


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--inside":
        inside(sys.argv[2], sys.argv[sys.argv.index("--") + 1:])
        return 0
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("SKIP: needs root and unshare (util-linux) for namespaces of its own")
        return SKIP
    # A mount namespace whose mounts cannot reach the host's: private
    # propagation, which a chroot (its root no mount point) cannot have.
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: no private mount namespace here (" + probe.stderr.strip() + ")")
        return SKIP
    result = unittest.main(exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
