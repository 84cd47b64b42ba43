"""Launching the C++ programs the Python tests talk to, and ending them.

Each program runs in a session (and process group) of its own, with its
output in files, so a test can read the launcher's lines (the run directory
it prints) while it runs; the nodes' addresses come from the run directory,
as attach() reads them. Every wait is bounded; `stop` sends SIGTERM to the
group, then SIGKILL to whatever is left.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import launchpad_client as lp

WIRE_TYPES = os.environ.get("LP_WIRE_TYPES_PROGRAM", "")
ACTOR_LEARNER = os.environ.get("LP_EXAMPLE_ACTOR_LEARNER", "")
SECRET_LINE = re.compile(r"\[lp\] the launch's secret is in (\S+)/secret")
STARTUP = 30.0  # seconds a launch may take to serve, under a sanitizer on 2 busy cores


class Launched:
    def __init__(self, argv):
        self.dir = tempfile.mkdtemp(prefix="lp-python-test-")
        self.stdout_path = os.path.join(self.dir, "stdout")
        self.stderr_path = os.path.join(self.dir, "stderr")
        # A checkpointed program (actor_learner) keeps its checkpoints in here,
        # not in the user's ~/.local/state.
        env = dict(os.environ, XDG_STATE_HOME=os.path.join(self.dir, "state"))
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                            start_new_session=True, env=env)
        self.argv = argv

    def output(self):
        with open(self.stderr_path, errors="replace") as err, open(self.stdout_path, errors="replace") as out:
            return err.read() + out.read()

    def wait_for(self, pattern, timeout=STARTUP):
        """The first match of `pattern` in the program's output; fails the
        test with the output if it does not come within `timeout` seconds."""
        give_up = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.output())
            if match:
                return match
            if self.process.poll() is not None or time.monotonic() > give_up:
                why = (f"exited with status {self.process.returncode}" if self.process.poll() is not None
                       else f"did not print it within {timeout:g} s")
                raise AssertionError(f"{' '.join(self.argv)} {why}; waited for {pattern!r}; its output:\n"
                                     + self.output()[-3000:])
            time.sleep(0.02)

    def run_dir(self):
        return self.wait_for(SECRET_LINE).group(1)

    def wait_exit(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        """Ends the program and everything in its process group."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if self.wait_exit(15) is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


def launch_wire_types(*flags):
    """wire_types under local_mt, serving; returns (Launched, Program)."""
    launched = Launched([WIRE_TYPES, "--lp_launch=local_mt", *flags])
    try:
        labels = ["scalars", "arrays", "containers", "calls", "tallies/0", "tallies/1"]
        return launched, lp.attach(launched.run_dir(), wait_for=labels, startup_timeout=STARTUP)
    except BaseException:
        launched.stop()
        raise
