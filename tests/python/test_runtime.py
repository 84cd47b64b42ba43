"""`python3 -m launchpad_client.runtime`, the process of one Python node,
started here as its host will start it: a spec file, a control pipe. Each
way it can fail before it serves ends it with its own status and a message
that says what to do; a served node stops on SIGTERM; nothing is left
running after any test."""

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import launchpad_client as lp
from launchpad_client import runtime
from launchpad_client.server import NodeServer

SECRET = "00112233445566778899aabbccddeeff"
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(lp.__file__)))

LEARNER = """
import time
import launchpad_client as lp

class Learner:
    def __init__(self, rate: float, name: str, counter=None):
        self.rate, self.name, self.counter = rate, name, counter
        self.steps = 0

    def step(self, n: int) -> float:
        self.steps += n
        return self.steps * self.rate

    def slow(self, seconds: float) -> None:
        open(self.name + ".started", "w").close()  # the test waits for it
        time.sleep(seconds)

    def ask_counter(self, x: int) -> int:
        return self.counter.add(x)

class Runner:
    def __init__(self):
        pass

    def ping(self) -> str:
        return "pong"

    def run(self) -> None:
        lp.stop()

class Broken(Learner):
    def step(self, n: list[float]) -> float: ...
"""

DECLARED = [{"name": "step", "arity": 1, "signature": "double step(long)",
             "params": [{"kind": "integer", "bits": 64, "signed": True, "type": "long"}],
             "result": {"kind": "floating", "bits": 64, "type": "double"}}]


class Counter:
    def __init__(self):
        self.total = 0

    def add(self, x: int) -> int:
        self.total += x
        return self.total


class Runtime(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="lp-runtime-test-")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.dir], check=False))
        with open(os.path.join(self.dir, "secret"), "w") as f:
            f.write(SECRET + "\n")
        with open(os.path.join(self.dir, "learner_module.py"), "w") as f:
            f.write(textwrap.dedent(LEARNER))

    def start(self, module="learner_module", cls="Learner", declared=DECLARED,
              args=(0.5, "lr"), schemas=({"kind": "floating", "bits": 64}, {"kind": "string"}),
              has_run=False):
        spec = {"node": "learner", "program": "test", "service": "Learner", "module": module,
                "class": cls, "declared": declared, "args": list(args),
                "arg_schemas": list(schemas), "run_dir": self.dir, "host": "127.0.0.1",
                "has_run": has_run}
        path = os.path.join(self.dir, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        read, write = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([self.dir, PACKAGE]),
               "LP_PYTHON_CONTROL_FD": str(write)}
        process = subprocess.Popen([sys.executable, "-m", "launchpad_client.runtime", path],
                                   env=env, pass_fds=(write,), cwd=self.dir, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        os.close(write)
        control = queue.Queue()

        def read_control():
            with os.fdopen(read, "r") as lines:
                for line in lines:
                    control.put(line.strip())
        reader = threading.Thread(target=read_control, daemon=True)
        reader.start()

        def end():
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=10)
            reader.join(timeout=10)
        self.addCleanup(end)
        return process, control

    def line(self, control, timeout=20):
        try:
            return control.get(timeout=timeout)
        except queue.Empty:
            self.fail("no line on the control pipe in time")

    def wait_started(self, timeout=20):
        """Waits until the node runs `slow` (it leaves lr.started in the
        process's directory, which is the test's)."""
        give_up = time.monotonic() + timeout
        while not os.path.exists(os.path.join(self.dir, "lr.started")):
            self.assertLess(time.monotonic(), give_up, "the call did not start in time")
            time.sleep(0.01)

    def ended(self, process, timeout=20):
        _, err = process.communicate(timeout=timeout)
        return process.returncode, err

    def test_serves_is_called_and_stops_on_sigterm(self):
        process, control = self.start()
        kind, url = self.line(control).split()
        self.assertEqual(kind, "serving")
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        self.assertEqual(node.step(4), 2.0)
        with self.assertRaises(TypeError):  # the client checks the declared type
            node.step(1.5)
        process.send_signal(signal.SIGTERM)
        status, _ = self.ended(process)
        self.assertEqual(status, 0)

    def test_a_call_running_at_sigterm_ends_before_the_process(self):
        process, control = self.start(declared=None)
        _, url = self.line(control).split()
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        future = node.futures.slow(1.0)
        self.wait_started()
        process.send_signal(signal.SIGTERM)
        self.assertIsNone(future.result(timeout=10))
        self.assertEqual(self.ended(process)[0], 0)

    def test_a_module_that_fails_to_import(self):
        with open(os.path.join(self.dir, "bad_module.py"), "w") as f:
            f.write("import no_such_package_anywhere\n")
        process, _ = self.start(module="bad_module")
        status, err = self.ended(process)
        self.assertEqual(status, runtime.IMPORT_FAILED)
        self.assertIn("cannot import module 'bad_module'", err)
        self.assertIn("ModuleNotFoundError: No module named 'no_such_package_anywhere'", err)
        self.assertIn("to see why, run:", err)

    def test_a_class_that_is_not_there(self):
        process, _ = self.start(cls="Lerner")
        status, err = self.ended(process)
        self.assertEqual(status, runtime.IMPORT_FAILED)
        self.assertIn("has no class 'Lerner'", err)
        self.assertIn("Learner", err)

    def test_types_that_differ_from_the_declaration(self):
        process, _ = self.start(cls="Broken")
        status, err = self.ended(process)
        self.assertEqual(status, runtime.TYPES_DIFFER)
        self.assertIn("Broken.step, parameter 1: C++ long against Python list[float]", err)

    def test_a_constructor_that_raises(self):
        process, _ = self.start(args=(0.5,), schemas=({"kind": "floating", "bits": 64},))
        status, err = self.ended(process)
        self.assertEqual(status, runtime.CONSTRUCTION_FAILED)
        self.assertIn("TypeError", err)

    def test_run_and_stop_reach_the_host(self):
        process, control = self.start(cls="Runner", declared=None, args=(), schemas=(),
                                      has_run=True)
        self.assertEqual(self.line(control).split()[0], "serving")
        self.assertEqual({self.line(control), self.line(control)}, {"stop", "finished"})
        process.send_signal(signal.SIGTERM)
        self.assertEqual(self.ended(process)[0], 0)

    def test_a_handle_is_a_client_of_that_node(self):
        counter = NodeServer(Counter(), node="counter", program="test", secret=SECRET).start()
        self.addCleanup(counter.close)
        process, control = self.start(
            declared=None, args=(0.5, "lr", "counter"),
            schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                     {"kind": "handle", "service": "Counter"}))
        _, url = self.line(control).split()
        # The counter's address reaches the nodes file after the learner
        # was built: its client looks it up on first use.
        def publish():
            with open(os.path.join(self.dir, "nodes"), "a") as nodes:
                nodes.write(f"counter {counter.url}\n")
        threading.Timer(0.2, publish).start()
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        self.assertEqual(node.ask_counter(3), 3)
        self.assertEqual(node.ask_counter(4), 7)

    def test_killed_mid_call_the_caller_gets_a_transport_error(self):
        process, control = self.start(declared=None)
        _, url = self.line(control).split()
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        future = node.futures.slow(30.0)
        self.wait_started()
        started = time.monotonic()
        process.kill()
        with self.assertRaises(lp.TransportError):
            future.result(timeout=10)
        self.assertLess(time.monotonic() - started, 10)


if __name__ == "__main__":
    unittest.main()
