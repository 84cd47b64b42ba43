"""A Launchpad program's per-group settings reach its launch (groups.py):
restarts on failure (a node that fails once and is restarted; one that
fails past its restarts and fails the launch, naming node and count), the
group's environment from program.group(...).env and local_resources'
PythonProcess, visible in its node and not in another group's, and its
resources (local_mp pins its process to one core), under local_mp and
local_mt (where a failure stops the program, as for a C++ program); the
exit status of a script that never calls wait(). Then what the front end
refuses before anything starts. Each launch runs as
test_launchpad.py's do: a process in a session and TMPDIR of its own,
bounded in time, leaving nothing."""

import json
import os
import shutil
import tempfile
import unittest

from test_launchpad import run, skip_without_cloudpickle

import launchpad as lp


def launch_groups(launch_type, max_restarts, failures, *more):
    """Runs groups.py; returns (status, output, {note: what it saw},
    what is left)."""
    directory = tempfile.mkdtemp(prefix="lp-launchpad-groups-")
    try:
        status, output, _, left = run("groups.py", launch_type, directory, str(max_restarts),
                                      str(failures), *more)
        notes = {}
        for name in os.listdir(directory):
            with open(os.path.join(directory, name)) as f:
                notes[name] = json.load(f)
        return status, output, notes, left
    finally:
        shutil.rmtree(directory, ignore_errors=True)


OWN_ENV = {"GROUPS_TEST_COLOR": "blue", "GROUPS_TEST_SHADE": "dark"}
NO_ENV = {"GROUPS_TEST_COLOR": None, "GROUPS_TEST_SHADE": None}


class Restarts(unittest.TestCase):
    def test_a_node_that_fails_once_is_restarted_local_mp(self):
        status, output, notes, left = launch_groups("local_mp", 1, 1)
        self.assertEqual(status, 0, output)
        self.assertEqual(sorted(notes), ["attempt_0", "attempt_1", "ok", "plain"], output)
        self.assertEqual(notes["ok"], 1)
        self.assertIn("[lp] node flaky/0 exited with status 1; restarting it in 50 ms "
                      "(restart 1 of 1)", output)
        for attempt in ("attempt_0", "attempt_1"):  # the restarted process has them too
            self.assertEqual(notes[attempt]["env"], OWN_ENV, output)
            self.assertEqual(notes[attempt]["cores"], 1, output)  # resources(cpus=1): pinned
        self.assertEqual(notes["plain"]["env"], NO_ENV, output)
        self.assertEqual(left, [], output)

    def test_a_node_that_fails_past_its_restarts_fails_the_launch_local_mp(self):
        status, output, notes, left = launch_groups("local_mp", 1, 5)
        self.assertNotEqual(status, 0, output)
        self.assertEqual(sorted(notes), ["attempt_0", "attempt_1", "plain"], output)
        self.assertIn("(restart 1 of 1)", output)
        self.assertNotIn("(restart 2 of", output)
        self.assertIn("[lp] node flaky/0 failed: exited with status 1 after 1 restart "
                      "(restart_on_failure(1))", output)
        self.assertIn("RuntimeError: attempt 1 fails on purpose", output)
        self.assertIn("RuntimeError: program groups ended with status 1", output)
        self.assertEqual(left, [], output)

    def test_a_caller_reaches_a_restarted_node_local_mp(self):
        # Over TCP the restarted node serves on another port; on its unix
        # socket, at the same path. The caller's host must not answer the
        # dead address again.
        for flags in (("--lp_same_host=off",), ()):
            with self.subTest(flags=flags):
                directory = tempfile.mkdtemp(prefix="lp-launchpad-groups-")
                try:
                    status, output, _, left = run("groups.py", "restarted", "local_mp",
                                                  directory, *flags)
                    notes = sorted(os.listdir(directory))
                    reached = None
                    if "reached" in notes:
                        with open(os.path.join(directory, "reached")) as f:
                            reached = json.load(f)
                finally:
                    shutil.rmtree(directory, ignore_errors=True)
                self.assertIn("(restart 1 of 1)", output)
                self.assertEqual(notes, ["called", "reached", "server_0", "server_1"], output)
                self.assertNotEqual(reached["first"], reached["then"], output)
                self.assertEqual(status, 0, output)
                self.assertEqual(left, [], output)

    def test_env_per_group_local_mt(self):
        status, output, notes, left = launch_groups("local_mt", 0, 0)
        self.assertEqual(status, 0, output)
        self.assertEqual(sorted(notes), ["attempt_0", "ok", "plain"], output)
        self.assertEqual(notes["attempt_0"]["env"], OWN_ENV, output)
        self.assertEqual(notes["plain"]["env"], NO_ENV, output)
        self.assertEqual(left, [], output)

    def test_no_restart_under_local_mt_says_so(self):
        status, output, notes, left = launch_groups("local_mt", 1, 1)
        self.assertNotEqual(status, 0, output)
        self.assertIn("[lp] group flaky's restart_on_failure(1) applies under local_mp, "
                      "test_mp, slurm and kubernetes; under local_mt a node's failure stops "
                      "the program", output)
        self.assertEqual(sorted(notes), ["attempt_0", "plain"], output)
        self.assertIn("[lp] node flaky/0 failed", output)
        self.assertEqual(left, [], output)


class WithoutWait(unittest.TestCase):
    """A script that launches and never calls wait() ends once its program
    has, with the launcher's exit status: 1 when a node failed (Python
    ignores what an atexit handler raises, so it used to exit 0), 0 when
    the program ended cleanly."""

    def check(self, launch_type):
        status, output, notes, left = launch_groups(launch_type, 0, 1, "nowait")
        self.assertEqual(status, 1, output)
        self.assertIn("[lp] node flaky/0 failed", output)
        self.assertIn("[lp] program groups ended with status 1 and this script did not wait() "
                      "for it: the script exits with status 1", output)
        self.assertEqual(left, [], output)
        status, output, notes, left = launch_groups(launch_type, 0, 0, "nowait")
        self.assertEqual(status, 0, output)
        self.assertIn("ok", notes, output)
        self.assertNotIn("did not wait()", output)
        self.assertEqual(left, [], output)

    def test_local_mt(self):
        self.check("local_mt")

    def test_local_mp(self):
        self.check("local_mp")


class LabelsToWaitFor(unittest.TestCase):
    """controller.wait(labels_to_wait_for=["quick"]) returns once the runs
    of group quick have returned (return_on_first_completed: the first),
    while group slow still runs; an unknown label is refused."""

    def check(self, launch_type):
        directory = tempfile.mkdtemp(prefix="lp-launchpad-labels-")
        try:
            status, output, _, left = run("groups.py", "labels", launch_type, directory)
            with open(os.path.join(directory, "seen")) as f:
                seen = json.load(f)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        self.assertEqual(status, 0, output)
        self.assertEqual(seen["first"], [["quick_0"], None], output)  # still running
        self.assertEqual(seen["all"], [["go", "quick_0", "quick_1"], None], output)
        self.assertIn("program labels has no group 'fast' (its groups: quick, slow)",
                      seen["unknown"])
        self.assertEqual(seen["end"], [["go", "quick_0", "quick_1", "slow"], 0], output)
        self.assertEqual(left, [], output)

    def test_local_mt(self):
        self.check("local_mt")

    def test_local_mp(self):
        self.check("local_mp")


def _work():
    pass


class Refusals(unittest.TestCase):
    """What launch() and the groups refuse before anything starts."""

    def program(self):
        program = lp.Program("refused")
        program.add_node(lp.PyNode(_work), label="actors")
        return program

    def refused(self, error, text, **kwargs):
        tmp = tempfile.mkdtemp(prefix="lp-launchpad-refused-")
        saved = tempfile.tempdir
        tempfile.tempdir = tmp
        try:
            with self.assertRaises(error) as caught:
                lp.launch(self.program(), launch_type=kwargs.pop("launch_type", "local_mp"),
                          **kwargs)
            self.assertIn(text, str(caught.exception))
            self.assertEqual(os.listdir(tmp), [])  # no description written
        finally:
            tempfile.tempdir = saved
            shutil.rmtree(tmp)

    def test_local_resources(self):
        self.refused(ValueError, "local_resources names group 'learner', which program "
                     "refused lacks (its groups: actors)",
                     local_resources={"learner": lp.PythonProcess()})
        self.refused(TypeError, "local_resources['actors'] is an lp.PythonProcess(env=...), "
                     "not a dict", local_resources={"actors": {"env": {}}})
        self.refused(ValueError, "local_resources['actors'].args (seed) has no counterpart "
                     "here", local_resources={"actors": lp.PythonProcess(args={"seed": 1})})
        self.refused(ValueError, "group 'actors': 'LP_SECRET' cannot be an environment",
                     local_resources={"actors": lp.PythonProcess(env={"LP_SECRET": "x"})})

    def test_xm_resources_on_a_cluster(self):
        self.refused(ValueError, "xm_resources is for Vertex AI, which slurm does not read: "
                     "ask for a group's resources with program.group(label).resources(",
                     launch_type="slurm", xm_resources={"actors": object()})

    def test_settings_of_a_group_without_nodes(self):
        program = self.program()
        program.group("learner").restart_on_failure(2)
        with self.assertRaisesRegex(ValueError, "group 'learner' of program refused has "
                                    "settings but no node"):
            lp.launch(program, launch_type="local_mp")

    def test_group_settings_are_checked(self):
        group = lp.Program("checked").group("actors")
        with self.assertRaisesRegex(ValueError, "restart_on_failure takes a count of 0 or more"):
            group.restart_on_failure(-1)
        with self.assertRaisesRegex(TypeError, "resources takes an lp.Resources"):
            group.resources({"cpus": 2})
        with self.assertRaisesRegex(ValueError, "asks fewer than 1 CPU"):
            lp.Resources(cpus=0)
        with self.assertRaisesRegex(TypeError, "Resources.memory_mb is a whole number"):
            lp.Resources(memory_mb=1.5)
        with self.assertRaisesRegex(ValueError, "'A=B' cannot be an environment"):
            group.env({"A=B": "1"})
        with self.assertRaisesRegex(TypeError, "environment variable X is a str"):
            group.env({"X": None})
        # Chained, as lp::node_group's, and a context manager.
        program = lp.Program("chained")
        with program.group("actors").restart_on_failure(3).env({"X": 1}) as actors:
            program.add_node(lp.PyNode(_work))
        self.assertEqual(actors.label, "actors")
        self.assertEqual(list(program.groups), ["actors"])
        self.assertEqual(program._described_groups({"actors": {"Y": "2"}}),
                         {"actors": {"max_restarts": 3, "restart_backoff_ms": 200,
                                     "env": {"X": "1", "Y": "2"}}})


if __name__ == "__main__":
    skip_without_cloudpickle()
    unittest.main(verbosity=2)
