"""A Launchpad program whose groups have settings, run by test_groups.py:
`groups.py LAUNCH_TYPE DIRECTORY MAX_RESTARTS FAILURES [nowait]`. Group "flaky"
restarts on failure at most MAX_RESTARTS times, asks for one core and 256
MB, and has an environment of its own (program.group(...).env and
local_resources' PythonProcess); its node fails its first FAILURES
attempts, then notes "ok" and stops the program. Group "plain" has none of
these. Each attempt notes, in DIRECTORY, the environment and the cores it
saw. With `nowait` the script does not call wait(), and ends as its
program has. Under kubernetes (with --lp_kube_image and --lp_dry_run) it writes the
manifests, which tests/kube/launchpad_manifests.py reads."""

import json
import os
import sys
import time

import launchpad as lp

SEEN = ("GROUPS_TEST_COLOR", "GROUPS_TEST_SHADE")


def _note(directory, name, seen):
    with open(os.path.join(directory, name), "w") as f:
        json.dump(seen, f)


def _seen():
    return {"env": {name: os.environ.get(name) for name in SEEN},
            "cores": len(os.sched_getaffinity(0))}


def _flaky(directory, failures):
    attempt = sum(name.startswith("attempt_") for name in os.listdir(directory))
    _note(directory, f"attempt_{attempt}", _seen())
    if attempt < failures:
        raise RuntimeError(f"attempt {attempt} fails on purpose")
    _note(directory, "ok", attempt)
    lp.stop()


def _plain(directory):
    _note(directory, "plain", _seen())


def groups(directory, max_restarts, failures):
    program = lp.Program("groups")
    flaky = program.group("flaky").restart_on_failure(max_restarts, backoff=0.05)
    flaky.resources(lp.Resources(cpus=1, memory_mb=256))
    with flaky.env({"GROUPS_TEST_COLOR": "blue"}):
        program.add_node(lp.PyNode(_flaky, directory, failures))
    program.add_node(lp.PyNode(_plain, directory), label="plain")
    return program


def _quick(directory, index):
    if index == 1:  # the second waits for the script's word
        while not os.path.exists(os.path.join(directory, "go")):
            time.sleep(0.05)
    _note(directory, f"quick_{index}", index)


def _slow(directory):
    lp.wait_for_stop()
    _note(directory, "slow", "stopped")


def labels_to_wait_for(launch_type, directory):
    """`groups.py labels LAUNCH_TYPE DIRECTORY`: the script waits for
    group quick's runs while group slow's runs on, as Launchpad's
    wait(labels_to_wait_for=...) does, first for the first of them; it
    notes what it saw after each wait."""
    program = lp.Program("labels")
    with program.group("quick"):
        for index in range(2):
            program.add_node(lp.PyNode(_quick, directory, index))
    program.add_node(lp.PyNode(_slow, directory), label="slow")
    controller = lp.launch(program, launch_type=launch_type)
    seen = {}
    controller.wait(labels_to_wait_for=["quick"], return_on_first_completed=True)
    seen["first"] = sorted(os.listdir(directory)), controller.exit_status
    _note(directory, "go", None)
    controller.wait(labels_to_wait_for=["quick"])
    seen["all"] = sorted(os.listdir(directory)), controller.exit_status
    try:
        controller.wait(labels_to_wait_for=["fast"])
    except ValueError as e:
        seen["unknown"] = str(e)
    controller.stop()
    controller.wait()
    seen["end"] = sorted(os.listdir(directory)), controller.exit_status
    _note(directory, "seen", seen)


class _Server:
    """Fails its first run() once the caller has called it; serves on after
    its restart, in a process of its own."""

    def __init__(self, directory):
        self._directory = directory

    def pid(self):
        return os.getpid()

    def run(self):
        attempt = sum(name.startswith("server_") for name in os.listdir(self._directory))
        _note(self._directory, f"server_{attempt}", os.getpid())
        if attempt == 0:
            called = os.path.join(self._directory, "called")
            give_up = time.monotonic() + 20
            while not os.path.exists(called) and time.monotonic() < give_up:
                time.sleep(0.05)
            raise RuntimeError("the server fails once it was called, on purpose")
        lp.wait_for_stop()


def _caller(server, directory):
    first = server.pid()
    _note(directory, "called", first)
    give_up = time.monotonic() + 30  # the host's lookup would give the dead address for 60 s
    errors = 0
    while time.monotonic() < give_up:
        try:
            now = server.pid()
        except Exception:  # the server is down, or not yet back
            errors += 1
            time.sleep(0.05)
            continue
        if now != first:
            _note(directory, "reached", {"first": first, "then": now, "errors": errors})
            break
        time.sleep(0.05)
    lp.stop()


def restarted(launch_type, directory, *flags):
    """`groups.py restarted LAUNCH_TYPE DIRECTORY [--lp_flag ...]`: a node's
    caller reaches it again after the launch restarted it (in a new process,
    at a new address), and notes the two pids it saw."""
    program = lp.Program("restarted")
    with program.group("server").restart_on_failure(1, backoff=0.05):
        server = program.add_node(lp.CourierNode(_Server, directory), label="server")
    program.add_node(lp.PyNode(_caller, server, directory), label="caller")
    lp.launch(program, launch_type=launch_type, lp_flags=tuple(flags)).wait()


if __name__ == "__main__":
    if sys.argv[1] == "labels":
        labels_to_wait_for(*sys.argv[2:4])
        sys.exit(0)
    if sys.argv[1] == "restarted":
        restarted(*sys.argv[2:])
        sys.exit(0)
    launch_type, directory, max_restarts, failures = sys.argv[1:5]
    waits = "nowait" not in sys.argv[5:]  # the script ends with no wait()
    # Vertex AI's resources, which Launchpad ignores on this host, as this
    # does (on a cluster it is refused, for program.group(...).resources).
    xm = {"flaky": "ignored"} if launch_type.startswith(("local", "test")) else None
    controller = lp.launch(
        groups(directory, int(max_restarts), int(failures)), launch_type=launch_type,
        local_resources={"flaky": lp.PythonProcess(env={"GROUPS_TEST_SHADE": "dark"})},
        xm_resources=xm)
    if waits:
        controller.wait()
