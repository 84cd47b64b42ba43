"""The signs of life of a Python node's run() (launchpad_client/_node/progress.py),
which the runtime's watch reads for a group's health_timeout: only run()'s
own thread makes them, and a wait in a call keeps it alive.
tests/python_nodes/test_processes.cpp watches whole nodes hang."""

import threading
import unittest
from unittest import mock

import launchpad_client as lp
from launchpad_client import metrics
from launchpad_client._node import host, progress


class Progress(unittest.TestCase):
    def setUp(self):
        patch = mock.patch.object(metrics, "_registry", metrics._Registry())
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(progress.end)

    def on_other_thread(self, action):
        thread = threading.Thread(target=action)
        thread.start()
        thread.join(10)
        self.assertFalse(thread.is_alive())

    def test_no_run_no_silence(self):
        progress.silence(100.0)
        self.assertEqual(progress.silence(200.0), 0.0)
        lp.heartbeat()  # outside a node's run(): nothing, and no error
        self.assertEqual(progress.silence(300.0), 0.0)

    def test_silence_grows_until_a_sign_of_run_s_own_thread(self):
        progress.begin()
        progress.silence(10.0)
        self.assertEqual(progress.silence(12.5), 2.5)
        # Another thread's signs are not run()'s.
        self.on_other_thread(lp.heartbeat)
        self.on_other_thread(lambda: metrics.counter("steps").add())
        self.assertEqual(progress.silence(13.0), 3.0)
        for sign in (lp.heartbeat, lambda: metrics.counter("steps").add(),
                     lambda: metrics.gauge("size").set(1), lambda: metrics.series("r").record(1),
                     host.stop_requested):
            sign()
            self.assertEqual(progress.silence(20.0), 0.0)
            self.assertEqual(progress.silence(21.0), 1.0)

    def test_a_wait_in_a_call_is_alive_and_ends_with_a_sign(self):
        progress.begin()
        progress.silence(10.0)
        with progress.waiting:
            self.assertEqual(progress.silence(50.0), 0.0)
        self.assertEqual(progress.silence(60.0), 0.0)
        self.assertEqual(progress.silence(61.0), 1.0)

    def test_after_run_returned_no_silence(self):
        progress.begin()
        progress.silence(10.0)
        self.assertEqual(progress.silence(11.0), 1.0)
        progress.end()
        self.assertEqual(progress.silence(30.0), 0.0)


if __name__ == "__main__":
    unittest.main()
