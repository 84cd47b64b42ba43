"""attach(): a running program from its run directory, by label and group,
read while it runs, and stopped."""

import os
import shutil
import tempfile
import time
import unittest

import launchpad_client as lp
from programs import ACTOR_LEARNER, WIRE_TYPES, Launched


def launch_actor_learner(test):
    """The actor_learner example under local_mp, its nodes' output in the
    launcher's (attach reads no log), and its run directory, which the test
    removes at the end if the launch could not."""
    launched = Launched([ACTOR_LEARNER, "--lp_launch=local_mp"])
    test.addCleanup(launched.stop)
    run_dir = launched.run_dir()
    test.addCleanup(shutil.rmtree, run_dir, True)
    return launched, run_dir


class ActorLearner(unittest.TestCase):
    def test_read_replay_size_and_parameters_while_it_learns(self):
        launched, run_dir = launch_actor_learner(self)
        prog = lp.attach(run_dir, wait_for=["replay", "learner", "actors"], startup_timeout=30)
        self.addCleanup(prog.close)
        self.assertEqual(prog.name, "actor_learner")
        self.assertEqual(prog.groups, ["actors"])
        replay, learner = prog["replay"], prog["learner"]
        self.assertTrue(replay.service.startswith("lp::replay<"), replay.service)
        self.assertEqual(learner.get_parameters.__doc__.splitlines()[0],
                         "lp::tensor<float> get_parameters()")

        sizes, learning_reads = [], 0
        give_up = time.monotonic() + 60
        try:
            while time.monotonic() < give_up:
                size = replay.info()[0]["size"]  # its one table
                done = learner.done()
                q = learner.get_parameters()
                sizes.append(size)
                if lp.have_numpy():
                    self.assertEqual(q.shape, (25, 4))
                    self.assertEqual(str(q.dtype), "float32")
                else:
                    self.assertEqual(q["shape"], [25, 4])
                    self.assertEqual(len(q["data"]), 100)
                if done:
                    break
                learning_reads += 1
                time.sleep(0.05)
        except (lp.TransportError, lp.RemoteError) as ended:
            # Learning ended between two reads, and the program with it: its
            # nodes refuse calls while they drain (503 stopping), then are gone.
            if isinstance(ended, lp.RemoteError) and ended.code != "stopping":
                raise
        print(f"\n  read {learning_reads} times while learning; replay sizes {sizes[0]} .. {sizes[-1]}",
              end=" ", flush=True)
        self.assertGreater(learning_reads, 0, "the program learnt before the test could look: "
                           "nothing was read while it learnt")
        self.assertTrue(all(0 <= s <= 2000 for s in sizes), sizes)
        self.assertEqual(sizes, sorted(sizes))  # the buffer only fills up
        self.assertGreater(sizes[-1], 0)
        # The program stops by itself once the learner is done.
        self.assertEqual(launched.wait_exit(60), 0, launched.output()[-2000:])

    def test_groups_and_stop(self):
        launched, run_dir = launch_actor_learner(self)
        # A group's name waits for one of its nodes: name each to have them all.
        prog = lp.attach(run_dir, wait_for=["replay", "learner", "actors/0", "actors/1", "actors/2"],
                         startup_timeout=30)
        self.addCleanup(prog.close)
        actors = prog.group("actors")
        self.assertEqual([a.label for a in actors], ["actors/0", "actors/1", "actors/2"])
        self.assertEqual(actors[2].service, "Actor")
        self.assertEqual(actors[2].method_names(), [])
        with self.assertRaises(KeyError) as caught:
            prog.group("learners")
        self.assertIn("the groups of this program: actors", caught.exception.__notes__[0])
        with self.assertRaises(KeyError):
            prog["nobody"]
        prog.stop()
        # How the stop went depends on what the actors were doing (issue 17:
        # an actor refused with 503 during the stop ends its node with 1).
        self.assertIsNotNone(launched.wait_exit(30), "the program did not stop")
        self.assertRegex(launched.output(), r"stopping every node|asked the program to stop")


class RunDirectories(unittest.TestCase):
    def test_a_local_mt_launch(self):
        launched = Launched([WIRE_TYPES, "--lp_launch=local_mt"])
        self.addCleanup(launched.stop)
        run_dir = launched.run_dir()
        prog = lp.attach(run_dir, wait_for=["calls", "tallies/1"], startup_timeout=30)
        self.addCleanup(prog.close)
        self.assertEqual(prog.name, "wire_types")
        self.assertEqual(prog["calls"].add(2, 3), 5)
        self.assertEqual([n.label for n in prog.group("tallies")], ["tallies/0", "tallies/1"])
        self.assertEqual(prog.labels, sorted(lp.attach(run_dir).labels))
        self.stop_and_wait(prog, launched)  # exit 0: a clean stop
        self.assertFalse(os.path.exists(run_dir))  # the launch removed it
        with self.assertRaisesRegex(FileNotFoundError, "has the program ended"):
            lp.attach(run_dir)

    def stop_and_wait(self, prog, launched):
        prog.stop()
        self.assertEqual(launched.wait_exit(30), 0, launched.output()[-2000:])
        return launched.output()

    def test_a_run_directory_without_addresses(self):
        run_dir = tempfile.mkdtemp(prefix="lp-lonely-")
        self.addCleanup(shutil.rmtree, run_dir)
        with open(os.path.join(run_dir, "secret"), "w") as f:
            f.write("ab" * 16 + "\n")
        started = time.monotonic()
        with self.assertRaisesRegex(lp.LaunchpadError, r"found no node addresses .*/nodes yet"):
            lp.attach(run_dir, startup_timeout=0.2)
        self.assertLess(time.monotonic() - started, 2)

    def test_the_nodes_file_and_never_the_logs(self):
        run_dir = tempfile.mkdtemp(prefix="lp-files-abcdef")
        self.addCleanup(shutil.rmtree, run_dir)
        # What nodes print is for people: however like an address, it is not read.
        os.mkdir(os.path.join(run_dir, "logs"))
        with open(os.path.join(run_dir, "logs", "shards.log"), "w") as f:
            f.write("[lp] shards/0 serving at http://127.0.0.1:1001\n")
        with self.assertRaisesRegex(lp.LaunchpadError, "found no node addresses"):
            lp.attach(run_dir, startup_timeout=0)
        with open(os.path.join(run_dir, "nodes"), "w") as f:
            f.write("shards/0 http://127.0.0.1:1001\n"
                    "shards/1 http://127.0.0.1:1002/\n"
                    "shards/0 http://127.0.0.1:1003\n"  # restarted: the last line wins
                    "replay http://127.0.0.1:2001\n"
                    "actors/0 http://127.0.0.1:20")  # still being written: not yet an address
        prog = lp.attach(run_dir, startup_timeout=0)
        self.assertEqual(prog.labels, ["replay", "shards/0", "shards/1"])
        self.assertEqual([n.url for n in prog.group("shards")],
                         ["http://127.0.0.1:1003", "http://127.0.0.1:1002"])
        self.assertIsNone(prog.run_dir and lp.read_secret(run_dir))  # no secret file: --lp_insecure


if __name__ == "__main__":
    unittest.main()
