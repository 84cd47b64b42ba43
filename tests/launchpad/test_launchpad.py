"""Launchpad programs (programs.py, launch_test.py, absl_main.py) on
lp-launchpad: a hello world and consumer/producers with futures, Courier's
values and a lambda for a constructor argument under local_mt and local_mp;
the four ways a node sees the stop; stops from the launching script, and
its SIGKILL; Launchpad's absltest under test_mt and test_mp; absl's flags.
Each runs as a process of its own in a session of its own, bounded in time,
in a TMPDIR of its own that must be empty after it (the description's
directory), with no run directory and no process of its session left."""

import json
import os
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH_TIMEOUT = 120  # seconds; a launch takes 1-10 s here
LEFT_BOUND = 30  # seconds within which a killed script's launch must be gone

try:
    import absl  # noqa: F401  (Launchpad's tests and flags are absl's)
    HAVE_ABSL = True
except ImportError:
    HAVE_ABSL = False
# .ci/run requires what this suite uses: there a missing absl fails it.
needs_absl = unittest.skipUnless(HAVE_ABSL or os.environ.get("LP_REQUIRE_CLOUDPICKLE"),
                                 "needs absl (apt-get install python3-absl)")


def session_processes(session):
    """The processes of session `session` (a launch runs in its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    found.append(int(entry))
            except OSError:
                pass  # gone meanwhile
    return found


def run(script, *args, kill_when=None, victims=None):
    """Runs `script ARGS` (RESULT, a scratch directory, for {result}) in a
    session and a TMPDIR of its own; returns (exit status, its output, the
    result directory's or file's content, what is left: files in its
    TMPDIR, run directories it printed that still exist, processes of its
    session). `kill_when`: a file whose appearance in the result directory
    makes this SIGKILL the script (or the processes `victims(session,
    output so far)` names), then wait up to LEFT_BOUND seconds for its
    launch to be gone."""
    scratch = tempfile.mkdtemp(prefix="lp-launchpad-test-")
    tmp, result = os.path.join(scratch, "tmp"), os.path.join(scratch, "result")
    os.mkdir(tmp)
    os.mkdir(result)
    try:
        env = dict(os.environ, TMPDIR=tmp, TEST_TMPDIR=os.path.join(scratch, "absl"))
        with open(os.path.join(scratch, "output"), "w+") as output:
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, script),
                 *[a.format(result=result) for a in args]],
                env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                if kill_when is not None:
                    give_up = time.monotonic() + LAUNCH_TIMEOUT
                    while not os.path.exists(os.path.join(result, kill_when)):
                        if process.poll() is not None or time.monotonic() > give_up:
                            break
                        time.sleep(0.05)
                    output.seek(0)
                    so_far = output.read()
                    for pid in victims(process.pid, so_far) if victims else [process.pid]:
                        os.kill(pid, signal.SIGKILL)
                status = process.wait(timeout=LAUNCH_TIMEOUT)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                    for pid in session_processes(process.pid):  # a launch that hung
                        os.kill(pid, signal.SIGKILL)
            give_up = time.monotonic() + LEFT_BOUND
            while session_processes(process.pid) and time.monotonic() < give_up:
                time.sleep(0.1)
            output.seek(0)
            text = output.read()
        run_dirs = re.findall(r"the launch's secret is in (\S+)/secret", text)
        left = (sorted(os.listdir(tmp)) + [d for d in run_dirs if os.path.exists(d)]
                + [f"process {p}" for p in session_processes(process.pid)])
        for pid in session_processes(process.pid):  # the test leaves nothing either
            os.kill(pid, signal.SIGKILL)
        seen = sorted(os.listdir(result))
        if seen == ["result.json"]:
            with open(os.path.join(result, "result.json")) as f:
                seen = json.load(f)
        return status, text, seen, left
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def launch(name, launch_type, **kwargs):
    """Runs programs.py NAME LAUNCH_TYPE RESULT."""
    # program_wait's nodes and a stop_from_ script note files in a
    # directory; the others' last node writes a result file.
    directory = (name in ("program_wait", "colocated", "cpp_killed",
                          "stop_handlers_in_script")
                 or name.startswith("stop_from_"))
    return run("programs.py", name, launch_type,
               "{result}" if directory else "{result}/result.json", **kwargs)


class LaunchpadPrograms(unittest.TestCase):
    def check_hello(self, launch_type):
        status, output, result, left = launch("hello", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(result, {"sync": "hello, world", "future": "hello, futures"}, output)
        self.assertEqual(left, [], output)

    def check_consumer_producers(self, launch_type):
        status, output, result, left = launch("consumer_producers", launch_type)
        self.assertEqual(status, 0, output)
        self.assertIsInstance(result, dict, output)
        # Producer 1's offset came from a lambda, 0's and 2's from a partial.
        self.assertEqual(result["work"], [1000, 101, 1002])
        echoed = [(e["type"], e["dtype"], e["value"]) for e in result["echo"]]
        self.assertEqual(echoed, [
            ("NoneType", None, None), ("bool", None, True), ("int", None, -7),
            ("float", None, 2.5), ("str", None, "text"), ("bytes", None, "00ff"),
            ("list", None, [1, [2, "three"]]), ("dict", None, {"a": 1, "b": [None, False]}),
            ("ndarray", "float32", [0.0, 1.0, 2.0, 3.0, 4.0]), ("ndarray", "int64", [1, -2]),
            ("uint8", None, 200)])
        self.assertEqual(result["kept"], [True] * 11)
        self.assertEqual(result["named"], [True, True])
        self.assertIn("RemoteError: producer/0.unsendable", result["unsendable"])
        self.assertIn("is of type object, which cannot cross the wire", result["unsendable"])
        self.assertIn("argument 1 of producer/0.echo is of type object", result["unsent"])
        self.assertEqual(left, [], output)

    def check_batched(self, launch_type):
        status, output, result, left = launch("batched", launch_type)
        self.assertEqual(status, 0, output)
        self.assertIsNotNone(result, output)
        self.assertEqual(result["doubled"], [2 * i for i in range(8)])
        self.assertEqual(result["types"], ["int64"])  # a row of the int64 array it returned
        self.assertEqual(result["alone"], 42)
        self.assertEqual(result["pairs"], [[10.0, "p0!"], [11.0, "p1!"]])
        self.assertIn("RemoteError", result["unsplittable"])
        # "text" batches into ["text"], which doubled holds two results for one call.
        self.assertIn("BatchError: the result of a batch of 1 calls holds 2, not one per call",
                      result["unsplittable"])
        # 8 concurrent calls in batches of at most 4; the lone call a batch of 1.
        sizes = result["sizes"]
        self.assertEqual(sum(sizes), 10, sizes)
        self.assertTrue(all(1 <= n <= 4 for n in sizes), sizes)
        self.assertLess(len(sizes), 10, f"no two calls were batched together: {sizes}")
        self.assertEqual(left, [], output)

    def check_disabled_run(self, launch_type):
        status, output, result, left = launch("disabled_run", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(result, {"steps": [1, 2, 3], "ran": False}, output)
        self.assertEqual(left, [], output)

    def test_batched_local_mt(self):
        self.check_batched("local_mt")

    def test_batched_local_mp(self):
        self.check_batched("local_mp")

    def test_disabled_run_local_mt(self):
        self.check_disabled_run("local_mt")

    def test_disabled_run_local_mp(self):
        self.check_disabled_run("local_mp")

    def test_hello_local_mt(self):
        self.check_hello("local_mt")

    def test_hello_local_mp(self):
        self.check_hello("local_mp")

    def test_consumer_producers_local_mt(self):
        self.check_consumer_producers("local_mt")

    def test_consumer_producers_local_mp(self):
        self.check_consumer_producers("local_mp")

    def test_unknown_launch_type(self):
        status, output, _, left = launch("hello", "vertex_ai")
        self.assertNotEqual(status, 0)
        self.assertIn("'vertex_ai' is not a valid LaunchType", output)
        self.assertEqual(left, [])


class BatchedHandler(unittest.TestCase):
    """lp.batched_handler in this process, called from threads as a node's
    connections call it: what a batch holds, how values are batched and
    split, and the errors."""

    def setUp(self):
        import numpy as np
        import launchpad as lp
        self.np, self.lp = np, lp

    def calls(self, method, arguments):
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(len(arguments)) as pool:
            futures = [pool.submit(method, *args, **kwargs) for args, kwargs in arguments]
            return [f.result(timeout=30) if f.exception(timeout=30) is None else f.exception()
                    for f in futures]

    def test_values_are_batched_and_split_as_courier_does(self):
        np, seen = self.np, []

        def step(number, point, array, words, blob, options):
            seen.append((number, point, array, words, blob, options))
            return (number * 2, {"n": list(words)}, array.sum(axis=1))

        batched = self.lp.batched_handler(batch_size=3, timeout=5)(step)
        results = self.calls(batched, [
            ((i, (float(i), np.int8(i)), np.full((2, 2), i, np.float32), f"w{i}", bytes([i])),
             {"options": {"k": bool(i % 2)}}) for i in range(3)])
        (number, point, array, words, blob, options), = seen
        self.assertEqual((number.dtype, number.tolist()), (np.int64, [0, 1, 2]))
        self.assertEqual((point[0].dtype, point[1].dtype), (np.float64, np.int8))
        self.assertEqual((array.shape, array.dtype), ((3, 2, 2), np.float32))
        self.assertEqual(words, ["w0", "w1", "w2"])
        self.assertEqual((blob.dtype, list(blob)), (object, [b"\0", b"\1", b"\2"]))
        self.assertEqual(options["k"].tolist(), [False, True, False])
        self.assertEqual([(r[0], r[1], r[2].tolist()) for r in results],
                         [(0, {"n": "w0"}, [0.0, 0.0]), (2, {"n": "w1"}, [2.0, 2.0]),
                          (4, {"n": "w2"}, [4.0, 4.0])])

    def test_a_batch_runs_full_or_after_its_timeout_padded_if_asked(self):
        sizes = []

        def double(values):
            sizes.append(len(values))
            return values * 2

        batched = self.lp.batched_handler(batch_size=4, timeout=0.1)(double)
        self.assertEqual(self.calls(batched, [((i,), {}) for i in range(8)]), list(range(0, 16, 2)))
        self.assertEqual(sizes, [4, 4])
        start = time.monotonic()
        self.assertEqual(batched(5), 10)
        self.assertGreaterEqual(time.monotonic() - start, 0.09)
        self.assertEqual(sizes[-1], 1)
        padded = self.lp.batched_handler(batch_size=4, timeout=0.05, pad_batch=True)(double)
        self.assertEqual(padded(3), 6)
        self.assertEqual(sizes[-1], 4)

    def test_max_parallelism_bounds_the_batches_that_run_at_once(self):
        import threading
        running, most, lock = [0], [0], threading.Lock()

        def slow(values):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.2)
            with lock:
                running[0] -= 1
            return list(values)

        for parallelism in (1, 3):
            most[0] = 0
            batched = self.lp.batched_handler(batch_size=2, max_parallelism=parallelism,
                                              timeout=5)(slow)
            self.assertEqual(self.calls(batched, [((i,), {}) for i in range(6)]), list(range(6)))
            self.assertEqual(most[0], parallelism)

    def test_errors_reach_every_call_of_the_batch(self):
        def fails(values):
            raise KeyError("inside")

        batched = self.lp.batched_handler(batch_size=2, timeout=5)(fails)
        self.assertTrue(all(isinstance(e, KeyError) for e in self.calls(batched, [((1,), {})] * 2)))
        for arguments, message in [
                ([((1,), {}), ((1.5,), {})], "mixes types"),
                ([((1,), {}), ((1, 2), {})], "same number of arguments"),
                ([((1,), {"a": 1}), ((1,), {})], "same keyword arguments"),
                ([(((1, 2),), {}), (((1,),), {})], "different lengths")]:
            batched = self.lp.batched_handler(batch_size=2, timeout=5)(lambda *a, **k: [0, 0])
            errors = self.calls(batched, arguments)
            self.assertTrue(all(message in str(e) for e in errors), (message, errors))
        batched = self.lp.batched_handler(batch_size=2, timeout=5)(lambda v: 7)
        self.assertIn("is of type int; it returns one result per call",
                      str(self.calls(batched, [((1,), {})] * 2)[0]))


    def test_a_method_decorated_in_its_class_is_refused(self):
        with self.assertRaises(TypeError) as caught:
            class Learner:
                @self.lp.batched_handler(batch_size=2)
                def step(self, values):
                    return values
        self.assertIn("wrap the bound method in the constructor", str(caught.exception))
class Stopping(unittest.TestCase):
    """Launchpad's four ways for a node to see the stop, and the stops of
    the launching script: each node ends cleanly (it wrote what it saw
    after the stop), the program ends with status 0, nothing is left."""

    WAYS = ["register_stop_handler", "sleep", "stop_event", "wait_for_stop"]

    def check_four_ways(self, launch_type):
        status, output, seen, left = launch("program_wait", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(seen, sorted(self.WAYS + ["waiting_" + w for w in self.WAYS]), output)
        self.assertEqual(left, [], output)

    def test_four_ways_local_mt(self):
        self.check_four_ways("local_mt")

    def test_four_ways_local_mp(self):
        self.check_four_ways("local_mp")

    def check_stop_from_script(self, how, launch_type):
        status, output, seen, left = launch(f"stop_from_{how}", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(seen, ["started", "stopped"], output)
        self.assertEqual(left, [], output)

    def test_lp_stop_in_the_script_local_mt(self):
        self.check_stop_from_script("script", "local_mt")

    def test_controller_stop_local_mp(self):
        self.check_stop_from_script("controller", "local_mp")

    def check_stop_handlers_in_script(self, launch_type):
        status, output, seen, left = launch("stop_handlers_in_script", launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(seen, ["after_node_stop_first1_second1_unregistered0",
                                "after_script_stop_first1_second0_unregistered0",
                                "started", "stopped"], output)
        self.assertEqual(left, [], output)

    def test_stop_handlers_in_script_local_mt(self):
        self.check_stop_handlers_in_script("local_mt")

    def test_stop_handlers_in_script_local_mp(self):
        self.check_stop_handlers_in_script("local_mp")

    def check_script_killed(self, launch_type):
        # The script is SIGKILLed while its node waits: the launcher sees
        # the control socket end, stops the program (the node still sees a
        # clean stop) and removes the description's directory.
        status, output, seen, left = launch("stop_from_killed", launch_type,
                                            kill_when="started")
        self.assertEqual(status, -signal.SIGKILL, output)
        self.assertEqual(left, [], output)
        self.assertEqual(seen, ["started", "stopped"], output)

    def test_script_killed_local_mt(self):
        self.check_script_killed("local_mt")

    def test_script_killed_local_mp(self):
        self.check_script_killed("local_mp")


class Colocation(unittest.TestCase):
    """lp.MultiThreadingColocation: its nodes are threads of one process
    (the same pid), each called through its own handle, by a node beside
    it and by one outside; a nested colocation; the stop reaches every
    node's run(); the program ends cleanly and leaves nothing."""

    def run_colocated(self, launch_type):
        # launch() gives the directory's names only: read the files before
        # run() removes them.
        scratch = tempfile.mkdtemp(prefix="lp-colocated-")
        try:
            status, output, seen, left = run("programs.py", "colocated", launch_type, scratch)
            found = {}
            for name in ("caller", "waiter", "outsider"):
                path = os.path.join(scratch, name + ".json")
                if os.path.exists(path):
                    with open(path) as f:
                        found[name] = json.load(f)
            return status, output, sorted(os.listdir(scratch)), found, left
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def check(self, launch_type):
        status, output, names, found, left = self.run_colocated(launch_type)
        self.assertEqual(status, 0, output)
        self.assertEqual(names, ["caller.json", "caller_stopped", "counter_stopped",
                                 "outsider.json", "outsider_stopped", "waiter.json",
                                 "waiter_stopped"], output)
        caller, waiter, outsider = found["caller"], found["waiter"], found["outsider"]
        # One process holds the counter, the caller and the waiter.
        self.assertEqual(caller["counter_pid"], caller["pid"], output)
        self.assertEqual(waiter["pid"], caller["pid"], output)
        self.assertNotEqual(outsider["pid"], caller["pid"], output)
        self.assertEqual(outsider["counter_pid"], caller["pid"], output)
        # The counter's one total, whichever of the caller's two calls and
        # the outsider's came first.
        self.assertIn((caller["sync"], caller["future"], outsider["added"]),
                      [(2, 5, 15), (2, 15, 12), (12, 15, 10)])
        self.assertEqual(outsider["name"], "<launchpad.CourierClient colocated/0/1>")
        self.assertIn("colocated/0 serving at", output)
        self.assertEqual(left, [], output)

    def test_local_mt(self):
        self.check("local_mt")

    def test_local_mp(self):
        self.check("local_mp")


class ColocationInProcess(unittest.TestCase):
    """A colocation's object as its process builds it, run here: Launchpad's
    run() semantics (all, or the first with return_on_first_completed; a
    node's exception), its nodes' methods as "i.method", and what
    add_node refuses."""

    def setUp(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        self.lp = lp

    def built(self, nodes, **kwargs):
        return self.lp.MultiThreadingColocation(nodes, **kwargs).definition.build()

    def test_run_waits_for_all_or_the_first(self):
        import threading
        lp = self.lp
        first, second, go = threading.Event(), threading.Event(), threading.Event()
        self.built([lp.PyNode(first.set), lp.PyNode(second.set)]).run()
        self.assertTrue(first.is_set() and second.is_set())
        quick, slow = threading.Event(), threading.Event()

        def slowly():
            go.wait(10)
            slow.set()
        self.built([lp.PyNode(quick.set), lp.PyNode(slowly)],
                   return_on_first_completed=True).run()
        self.assertTrue(quick.is_set())
        self.assertFalse(slow.is_set())
        go.set()
        self.assertTrue(slow.wait(10))

    def test_a_node_that_raises_raises_at_once(self):
        import threading
        lp = self.lp
        never = threading.Event()

        def fails():
            raise ValueError("Foo")
        with self.assertRaisesRegex(ValueError, "Foo"):
            self.built([lp.PyNode(never.wait, 30), lp.PyNode(fails)]).run()
        never.set()

    def test_methods_are_served_by_index_and_disabled_runs_not_run(self):
        lp = self.lp

        class Counter:
            def __init__(self):
                self.ran = False

            def add(self, a, b=1):
                return a + b

            def _private(self):
                return 0

            def run(self):
                self.ran = True
        counter = lp.CourierNode(Counter)
        counter.disable_run()
        inner = lp.MultiThreadingColocation([lp.CourierNode(Counter)])
        built = self.built([counter, inner, lp.PyNode(print, end="")])
        self.assertEqual(dir(built), ["0.add", "1.0.add", "run"])
        self.assertEqual(getattr(built, "1.0.add")(2, b=3), 5)
        for missing in ("0._private", "3.add", "add", "x.add"):
            self.assertFalse(hasattr(built, missing), missing)
        built.run()
        self.assertFalse(getattr(built, "_parts")[0][0].ran)
        self.assertTrue(getattr(built, "_parts")[1][0]._parts[0][0].ran)

    def test_add_node_refuses_what_runs_elsewhere(self):
        lp = self.lp
        program = lp.Program("p")
        added = lp.PyNode(print)
        program.add_node(added, label="alone")
        with self.assertRaisesRegex(ValueError, "is alone/0 of program p already"):
            lp.MultiThreadingColocation([added])
        with self.assertRaisesRegex(ValueError, "is alone/0 of program p already"):
            program.add_node(added, label="again")
        colocated = lp.PyNode(print)
        colocation = lp.MultiThreadingColocation([colocated])
        with self.assertRaisesRegex(ValueError, "in another MultiThreadingColocation already"):
            lp.MultiThreadingColocation([colocated])
        with self.assertRaisesRegex(ValueError, "add the colocation to the program, not its"):
            program.add_node(colocated, label="part")
        with self.assertRaisesRegex(ValueError, "cannot hold itself"):
            colocation.add_node(colocation)
        with self.assertRaisesRegex(TypeError, "not a builtin_function_or_method"):
            colocation.add_node(print)
        # A colocated node's handle names it once its colocation is added.
        handle = colocated.create_handle()
        with self.assertRaisesRegex(RuntimeError, r"program.add_node\(colocation, label=...\) first"):
            handle.label
        self.assertIs(program.add_node(colocation, label="both"), colocation.create_handle())
        self.assertEqual(handle.label, "both/0/0")
        with self.assertRaisesRegex(ValueError, "needs at least one node"):
            lp.MultiThreadingColocation([]).definition


class CppNodes(unittest.TestCase):
    """lp.CppNode: examples/launchpad_cpp's C++ program as a node of a
    Launchpad program (its launch.py): a node process of the launch that is
    the C++ program itself, which the Python node calls directly, its
    values checked against the C++ declaration; the C++ process killed
    while it serves (the node fails, as the launch's policy says); a file
    that is no program of the library; a node it lacks, or one that takes
    handles."""

    EXAMPLE = os.path.join(HERE, "..", "..", "examples", "launchpad_cpp", "launch.py")

    def setUp(self):
        self.executable = os.environ.get("LP_EXAMPLE_LAUNCHPAD_CPP")
        if not self.executable:
            self.skipTest("LP_EXAMPLE_LAUNCHPAD_CPP (meson sets it) names no C++ program")

    def check_example(self, launch_type):
        status, output, result, left = run(self.EXAMPLE, self.executable, launch_type,
                                           "{result}/result.json")
        self.assertEqual(status, 0, output)
        self.assertIsInstance(result, dict, output)
        self.assertEqual(result["add"], 42)
        self.assertEqual(result["scale"], ["ndarray", "float64", [2.0, 5.0, -8.0]])
        self.assertEqual(result["greet"], "hello, Launchpad, from C++")
        self.assertEqual(result["sums"], [0, 2, 4, 6, 8])
        self.assertIn("RemoteError: calculator.add failed (bad_request, HTTP 400)",
                      result["refused"])
        self.assertIn('argument 1 of add: expected an integer (long int), got string "two"',
                      result["refused"])
        self.assertIn("keyword arguments are not taken by a C++ method: pass its arguments "
                      "positionally", result["keywords"])
        # One launch, one run directory: the C++ node is its node process,
        # started by the launcher, not a launch of its own.
        self.assertEqual(len(re.findall(r"the launch's secret is in ", output)), 1, output)
        self.assertRegex(output, r"\[calculator/0\] \[lp\] calculator/0 serving at "
                         r"http://127\.0\.0\.1:\d+ \(process \d+, node calculator of "
                         r"\S+/launchpad_cpp\)")
        self.assertEqual(left, [], output)

    def test_example_local_mt(self):
        self.check_example("local_mt")

    def test_example_local_mp(self):
        self.check_example("local_mp")

    def cpp_process(self, session, output):
        """The C++ node's process, checked while it serves: the C++ program
        itself (no Python process), a child of the launch's lp-launchpad,
        and in the launch's status as calculator/0."""
        executable = os.path.realpath(self.executable)
        found = []
        for pid in session_processes(session):
            try:
                if os.readlink(f"/proc/{pid}/exe") == executable:
                    found.append(pid)
            except OSError:
                continue
        self.assertEqual(len(found), 1, output)
        pid = found[0]
        with open(f"/proc/{pid}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        self.assertEqual(os.path.basename(os.readlink(f"/proc/{parent}/exe")), "lp-launchpad")
        run_dir = re.search(r"the launch's secret is in (\S+)/secret", output).group(1)
        # The status page has the node's own figures (its process's pid,
        # its methods' calls) from its first scrape on, within seconds.
        give_up = time.monotonic() + 20
        while True:
            shown = subprocess.run([self.executable, f"--lp_status={run_dir}", "--lp_json"],
                                   capture_output=True, text=True, timeout=60, check=True)
            nodes = {n["label"]: n for n in json.loads(shown.stdout)["nodes"]}
            node = nodes["calculator/0"]
            calls = [m["calls"] for m in node.get("methods", []) if m["name"] == "add"]
            if calls == [1.0] or time.monotonic() > give_up:
                break
            time.sleep(0.2)
        self.assertEqual(sorted(nodes), ["calculator/0", "caller/0"])
        self.assertEqual((node["pid"], node["service"], node["state"], calls),
                         (pid, "Calculator", "serving", [1.0]), shown.stdout)
        self.killed = pid
        return [pid]

    def check_killed(self, launch_type):
        status, output, seen, left = launch("cpp_killed", launch_type, kill_when="called",
                                            victims=self.cpp_process)
        self.assertNotEqual(status, 0, output)
        # No restart is asked: the node fails, and the program with it.
        self.assertRegex(output, r"node calculator/0 failed: \[lp.launch_error\] node "
                         r"'calculator/0' ended: its process \(\S+/launchpad_cpp\) killed by "
                         "signal SIGKILL")
        self.assertEqual(seen, ["called", "stopped"], output)  # its caller saw a clean stop
        self.assertFalse(os.path.exists(f"/proc/{self.killed}"))
        self.assertEqual(left, [], output)

    def test_killed_local_mt(self):
        self.check_killed("local_mt")

    def test_killed_local_mp(self):
        self.check_killed("local_mp")

    def test_under_test_mt_and_test_mp(self):
        status, output, result, left = launch("cpp_under_tests", "test_mt")
        self.assertEqual(status, 0, output)
        self.assertEqual(result, {"test_mt": [42, "hello, test, from C++"],
                                  "test_mp": [42, "hello, test, from C++"]}, output)
        self.assertEqual(left, [], output)

    def test_tls_local_mp(self):
        status, output, result, left = launch("cpp_tls", "local_mp")
        self.assertEqual(status, 0, output)
        self.assertEqual(result, {"add": 42}, output)
        self.assertRegex(output, r"\[calculator/0\] \[lp\] calculator/0 serving at "
                         r"https://127\.0\.0\.1:\d+ ")
        self.assertEqual(left, [], output)

    def test_not_a_program(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        with self.assertRaises(ValueError) as caught:
            lp.CppNode("/bin/false")
        self.assertIn("CppNode: /bin/false --lp_graph=json exited with status 1 without "
                      "printing its graph: is it a program built with the library",
                      str(caught.exception))

    def test_no_such_node(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        with self.assertRaises(ValueError) as caught:
            lp.CppNode(self.executable, node="adder")
        self.assertRegex(str(caught.exception),
                         r"\S+/launchpad_cpp has no node 'adder'; its nodes: calculator$")

    def test_a_node_with_handles_is_refused(self):
        # examples/counter's reader takes a handle of its counter: its
        # process would call a node that no launch runs.
        counter = os.environ.get("LP_EXAMPLE_COUNTER")
        if not counter:
            self.skipTest("LP_EXAMPLE_COUNTER (meson sets it) names no C++ program")
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        shown = json.loads(subprocess.run([counter, "--lp_graph=json"], capture_output=True,
                                          timeout=60, check=True).stdout)
        takes = [n for n in shown["nodes"] if n["edges"]]
        self.assertTrue(takes, shown)
        with self.assertRaises(ValueError) as caught:
            lp.CppNode(counter, node=takes[0]["label"])
        self.assertIn(f"node {takes[0]['label']} of {counter} takes handles of "
                      f"{', '.join(takes[0]['edges'])}, which do not run in a Launchpad "
                      "program", str(caught.exception))

    def test_arguments_are_checked_in_the_script(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        with self.assertRaises(FileNotFoundError) as caught:
            lp.CppNode("/nonexistent/calculator")
        self.assertIn("'/nonexistent/calculator' is not an executable file", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            lp.CppNode(self.executable, 3)
        self.assertIn("argument 1 is a int: the C++ program's arguments are its command line",
                      str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            lp.CppNode(self.executable, "--lp_launch=local_mp")
        self.assertIn("leave '--lp_launch=local_mp' out", str(caught.exception))
        node = lp.CppNode(self.executable, "--an_argument")
        self.assertEqual((node.service, node.node, node.has_run), ("Calculator", "calculator",
                                                                   False))
        with self.assertRaises(ValueError) as caught:
            lp.MultiThreadingColocation([node])
        self.assertIn("add it to the program, not to a MultiThreadingColocation",
                      str(caught.exception))
        program = lp.Program("cpp_elsewhere")
        program.add_node(node, label="calculator")
        for launch_type in ("slurm", "kubernetes"):
            with self.assertRaises(ValueError) as caught:
                lp.launch(program, launch_type=launch_type)
            self.assertIn(f"calculator/0 of program cpp_elsewhere are CppNodes, which run under "
                          f"local_mt, local_mp, test_mt and test_mp, not {launch_type} yet",
                          str(caught.exception))


@needs_absl
class UnderTests(unittest.TestCase):
    """Launchpad's consumer/producers absltest (launch_test.py) under
    test_mt and test_mp: the test calls the nodes, its cleanup stops them."""

    def test_launch_test(self):
        status, output, _, left = run("launch_test.py")
        self.assertEqual(status, 0, output)
        self.assertIn("Ran 3 tests", output)
        self.assertEqual(output.count("[       OK ]"), 3, output)
        self.assertEqual(left, [], output)


@needs_absl
class Flags(unittest.TestCase):
    """A script under absl's app.run: --lp_launch_type and
    --lp_termination_notice_secs as Launchpad reads them, and the
    library's own --lp_tls=on, --lp_same_host=off and
    --lp_shared_memory_mb=64, which absl accepts and the launch takes (it
    refuses a --lp_ flag it does not know)."""

    def test_absl_flags(self):
        status, output, result, left = run(
            "absl_main.py", "{result}/result.json", "--lp_launch_type=local_mp",
            "--lp_termination_notice_secs=5", "--lp_tls=on", "--lp_same_host=off",
            "--lp_shared_memory_mb=64")
        self.assertEqual(status, 0, output)
        self.assertIn("launch type local_mp, termination notice 5, tls on", output)
        self.assertIn("asker/0 serving at https://", output)
        self.assertEqual(result, {"sync": "hello, world", "future": "hello, futures"}, output)
        self.assertEqual(left, [], output)

    def test_absl_flags_with_their_values_after_a_space(self):
        # `--lp_x value`, as absl reads a flag's value, and a switch before
        # the script's own positional argument, which stays the script's.
        status, output, result, left = run(
            "absl_main.py", "--lp_launch_type", "local_mp", "--lp_termination_notice_secs", "5",
            "--lp_tls", "on", "--lp_system_malloc", "{result}/result.json")
        self.assertEqual(status, 0, output)
        self.assertIn("launch type local_mp, termination notice 5, tls on", output)
        self.assertIn("asker/0 serving at https://", output)
        self.assertEqual(result, {"sync": "hello, world", "future": "hello, futures"}, output)
        self.assertEqual(left, [], output)

    def test_a_flag_takes_the_next_word_when_the_launcher_says_it_takes_a_value(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        from launchpad import _flags
        words = ["--lp_launch_type", "test_mp", "--lp_system_malloc", "mine", "--lp_tls", "on",
                 "--lp_slurm_partition", "gpu", "--lp_status_port=0", "-lp_terminal", "files",
                 "--lp_resume", "--lp_dry_run", "--lp_same_host", "off", "--lp_shared_memory_mb",
                 "64", "--", "--lp_tls", "off"]
        self.assertEqual(_flags.lp_flags(words), [
            ("lp_launch_type", "test_mp"), ("lp_system_malloc", None), ("lp_tls", "on"),
            ("lp_slurm_partition", "gpu"), ("lp_status_port", "0"), ("lp_terminal", "files"),
            ("lp_resume", None), ("lp_dry_run", None), ("lp_same_host", "off"),
            ("lp_shared_memory_mb", "64")])

    def test_unknown_launch_type_flag(self):
        status, output, _, left = run("absl_main.py", "{result}/result.json",
                                      "--lp_launch_type=vertex_ai")
        self.assertNotEqual(status, 0)
        self.assertIn("lp_launch_type", output)
        self.assertEqual(left, [])


class Handles(unittest.TestCase):
    def test_a_node_not_added_says_to_add_it(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import launchpad as lp
        node = lp.PyNode(print, "hi")
        with self.assertRaises(RuntimeError) as caught:
            node.create_handle()
        self.assertIn("add it to its program first (program.add_node(node, label=...))",
                      str(caught.exception))
        handle = lp.Program("p").add_node(node, label="n")
        self.assertIs(node.create_handle(), handle)


class WithoutCloudpickle(unittest.TestCase):
    """A machine without cloudpickle imports launchpad and builds programs
    (its reference is written there); launch() says what to install."""

    def test_launch_names_the_package(self):
        script = (
            "import sys\n"
            "sys.modules['cloudpickle'] = None  # import cloudpickle now fails\n"
            "import launchpad as lp\n"
            "p = lp.Program('p')\n"
            "p.add_node(lp.PyNode(print, 'hi'), label='n')\n"
            "try:\n"
            "    lp.launch(p)\n"
            "except ImportError as e:\n"
            "    print('refused:', e)\n")
        done = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=LAUNCH_TIMEOUT, text=True)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertIn("refused: launchpad.launch() writes each node's definition with "
                      "cloudpickle", done.stdout)
        self.assertIn("apt-get install python3-cloudpickle", done.stdout)


def skip_without_cloudpickle():
    """Exits 77 (meson's skip) without cloudpickle, unless
    LP_REQUIRE_CLOUDPICKLE is set: then the import fails the test."""
    try:
        import cloudpickle  # noqa: F401  (launch() writes definitions with it)
    except ImportError:
        if os.environ.get("LP_REQUIRE_CLOUDPICKLE"):
            raise
        print("skipped: launchpad.launch() needs cloudpickle (apt-get install "
              "python3-cloudpickle)")
        sys.exit(77)


if __name__ == "__main__":
    skip_without_cloudpickle()
    unittest.main()
