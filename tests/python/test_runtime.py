"""`python3 -m launchpad_client.runtime`, the process of one Python node,
started here as its host will start it: a control socket of which the test
holds the host's end, which sends the spec first (or, by hand, a spec
file). Each way it can fail before it
serves ends it with its own status and a message that says what to do; a
served node hears the program's stop from its host, passes on the stops
it is asked for (launchpad_client.stop(), SIGTERM), and ends at its host's
`end` (after its run() returned) and when its host is gone; it keeps its
checkpoints in the C++ library's format; nothing is left running after any
test."""

import json
import os
import queue
import select
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import launchpad_client as lp
from launchpad_client._node import checkpoint
from launchpad_client._node import main as runtime
from launchpad_client import NodeServer

SECRET = "00112233445566778899aabbccddeeff"
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(lp.__file__)))
STARTUP = 20.0  # seconds a node may take to serve or to end, on 2 busy cores

LEARNER = """
import concurrent.futures
import threading
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

class Chatty(Runner):
    def run(self) -> None:
        # Lines written at once from many threads: each reaches the host whole.
        def tell():
            for _ in range(100):
                lp.stop()
        threads = [threading.Thread(target=tell) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def ask_both(self, x: int) -> int:
        # Both handles' first use at once: two address requests, one at a time.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first, second = pool.submit(self.a.add, x), pool.submit(self.b.add, x)
            return first.result() + second.result()

class Finisher:
    # run() waits for the stop, then works 0.3 s more, which its state
    # counts; stopping() is stop_requested() in a handler.
    def __init__(self):
        self.total = 0

    def add(self, x: int) -> int:
        self.total += x
        return self.total

    def stopping(self) -> bool:
        return lp.stop_requested()

    def run(self) -> None:
        while not lp.stop_requested():
            time.sleep(0.002)
        time.sleep(0.3)
        self.total += 1000

    def state(self):
        return {"total": self.total, "history": []}

    def restore(self, value):
        self.total = value["total"]

class Broken(Learner):
    def step(self, n: list[float]) -> float: ...

class Keeper:
    def __init__(self):
        self.total = 0
        self.history = []

    def add(self, x: int) -> int:
        self.total += x
        self.history.append(x)
        return self.total

    def state(self):
        return {"total": self.total, "history": self.history}

    def restore(self, value):
        self.total, self.history = value["total"], value["history"]

class SavesOnly:
    def add(self, x: int) -> int:
        return x

    def state(self):
        return 1

class RestoresOnly:
    def add(self, x: int) -> int:
        return x

    def restore(self, value):
        pass
"""

I64 = {"kind": "integer", "bits": 64, "signed": True, "type": "long"}
DECLARED = [{"name": "step", "arity": 1, "signature": "double step(long)",
             "params": [I64], "result": {"kind": "floating", "bits": 64, "type": "double"}}]
ADD = [{"name": "add", "arity": 1, "signature": "long add(long)", "params": [I64], "result": I64}]
# The State its C++ interface declares (lp_save, lp_restore): an lp::json.
KEEPER = dict(cls="Keeper", declared=ADD, args=(), schemas=(),
              state_schema={"kind": "json", "type": "lp::json"})
HANDLE = {"kind": "handle", "service": "Counter"}


class Host:
    """The test as the node's host: the other end of the control socket. It
    keeps every line the node writes, and answers each `address` request
    from `addresses` (label -> URL; a label it lacks gets `-` and a reason)
    after `delay` seconds, noting any request that came meanwhile. Once the
    node serves it says `run`, as a C++ host does once every node serves,
    unless `run_on_serving` is False."""

    def __init__(self, sock, run_on_serving=True):
        self.sock = sock
        self.run_on_serving = run_on_serving
        self.lines = queue.Queue()
        self.addresses = {}
        self.asked = []
        self.delay = 0.0
        self.overlapped = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        pending = b""
        while True:
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for i, line in enumerate(lines):
                text = line.decode()
                self.lines.put(text)
                if text.startswith("serving ") and self.run_on_serving:
                    self.sock.sendall(b"run\n")
                if text.startswith("address "):
                    self._answer(text[len("address "):], b"\n".join(lines[i + 1:]) + pending)

    def _answer(self, label, later):
        self.asked.append(label)
        if self.delay:
            time.sleep(self.delay)
            # A second request before this reply breaks the one-at-a-time rule.
            ready, _, _ = select.select([self.sock], [], [], 0)
            ahead = self.sock.recv(4096, socket.MSG_PEEK) if ready else b""
            self.overlapped |= b"address" in later + ahead
        url = self.addresses.get(label)
        reply = f"address {label} {url}" if url else f"address {label} - no node {label} in this program"
        self.sock.sendall((reply + "\n").encode())

    def say(self, line):
        self.sock.sendall((line + "\n").encode())

    def end(self):
        """Ends the node as a host does once its runs have returned."""
        self.say("end")

    def close(self):
        """The host's end goes, as when the host process dies."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(timeout=10)


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
        with open(os.path.join(self.dir, "learner_module.py"), "w") as f:
            f.write(textwrap.dedent(LEARNER))

    def start(self, module="learner_module", cls="Learner", declared=DECLARED,
              args=(0.5, "lr"), schemas=({"kind": "floating", "bits": 64}, {"kind": "string"}),
              has_run=False, checkpoint=None, control=True, env=None, stderr=subprocess.PIPE,
              run_on_serving=True, state_schema=None, spec_extra=None):
        """Starts the node; returns the process and the Host (None with
        control=False: a node started by hand, without a host)."""
        spec = {"node": "learner", "program": "test", "service": "Learner", "module": module,
                "class": cls, "declared": declared, "args": list(args),
                "arg_schemas": list(schemas), "secret": SECRET, "run_dir": self.dir,
                "host": "127.0.0.1", "has_run": has_run}
        if checkpoint is not None:
            spec["checkpoint"] = checkpoint
        if state_schema is not None:
            spec["state_schema"] = state_schema
        spec.update(spec_extra or {})
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([self.dir, PACKAGE]), **(env or {})}
        environment.pop("LP_PYTHON_CONTROL_FD", None)
        host_end = node_end = None
        if control:
            # As a C++ host: the spec over the socket (its arguments in the
            # spec's "args", with no CBOR after it), and nothing on disk.
            host_end, node_end = socket.socketpair()
            environment["LP_PYTHON_CONTROL_FD"] = str(node_end.fileno())
            where = "--node=test/learner"
            text = json.dumps(spec).encode()
            host_end.sendall(f"spec {len(text)} 0\n".encode() + text)
        else:
            where = os.path.join(self.dir, "spec.json")
            with open(where, "w") as f:
                json.dump(spec, f)
        process = subprocess.Popen([sys.executable, "-m", "launchpad_client.runtime", where],
                                   env=environment, pass_fds=(node_end.fileno(),) if control else (),
                                   cwd=self.dir, stdout=subprocess.PIPE, stderr=stderr, text=True)
        host = None
        if control:
            node_end.close()  # the node's alone, so that its end is the host's to see
            host = Host(host_end, run_on_serving)

        def end():
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=10)
            if host is not None:
                host.close()
        self.addCleanup(end)
        return process, host

    def line(self, host, timeout=STARTUP):
        try:
            return host.lines.get(timeout=timeout)
        except queue.Empty:
            self.fail("no line on the control socket in time")

    def serving(self, host):
        kind, url = self.line(host).split()
        self.assertEqual(kind, "serving")
        return url

    def client(self, url):
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        return node

    def wait_started(self, timeout=20):
        """Waits until the node runs `slow` (it leaves lr.started in the
        process's directory, which is the test's)."""
        give_up = time.monotonic() + timeout
        while not os.path.exists(os.path.join(self.dir, "lr.started")):
            self.assertLess(time.monotonic(), give_up, "the call did not start in time")
            time.sleep(0.01)

    def ended(self, process, timeout=STARTUP):
        _, err = process.communicate(timeout=timeout)
        return process.returncode, err

    def test_serves_is_called_and_ends_at_the_hosts_end(self):
        process, control = self.start()
        kind, url = self.line(control).split()
        self.assertEqual(kind, "serving")
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        self.assertEqual(node.step(4), 2.0)
        with self.assertRaises(TypeError):  # the client checks the declared type
            node.step(1.5)
        control.end()
        status, _ = self.ended(process)
        self.assertEqual(status, 0)

    def test_a_call_running_at_the_end_ends_before_the_process(self):
        process, control = self.start(declared=None)
        _, url = self.line(control).split()
        node = lp.connect(url, secret=SECRET)
        self.addCleanup(node.close)
        future = node.futures.slow(1.0)
        self.wait_started()
        control.end()
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
        control.end()
        self.assertEqual(self.ended(process)[0], 0)

    def text_of(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def url_on_stdout(self, process, timeout=STARTUP):
        """The URL a node started without a host prints ("[lp] learner
        serving at URL"), read by a thread that stops after that line."""
        first = queue.Queue()
        reader = threading.Thread(target=lambda: first.put(process.stdout.readline()), daemon=True)
        reader.start()
        try:
            line = first.get(timeout=timeout)
        except queue.Empty:
            self.fail("the node printed no line in time")
        reader.join(timeout=1)
        self.assertIn(" serving at ", line)
        return line.split()[-1]

    def counter(self):
        server = NodeServer(Counter(), node="counter", program="test", secret=SECRET).start()
        self.addCleanup(server.close)
        return server

    def test_a_handle_is_a_client_of_that_node_in_the_nodes_file(self):
        counter = self.counter()
        process, _ = self.start(declared=None, args=(0.5, "lr", "counter"),
                                schemas=({"kind": "floating", "bits": 64}, {"kind": "string"}, HANDLE),
                                control=False)
        url = self.url_on_stdout(process)
        # Without a host, a node started by hand finds its peers in the
        # nodes file, where the counter's address arrives after the learner
        # was built: its client looks it up on first use.
        def publish():
            with open(os.path.join(self.dir, "nodes"), "a") as nodes:
                nodes.write(f"counter {counter.url}\n")
        timer = threading.Timer(0.2, publish)
        timer.start()
        self.addCleanup(timer.cancel)
        node = self.client(url)
        self.assertEqual(node.ask_counter(3), 3)
        self.assertEqual(node.ask_counter(4), 7)

    # --- The control socket. -------------------------------------------------

    def test_a_handle_asks_the_host_for_its_address(self):
        counter = self.counter()
        process, host = self.start(declared=None, args=(0.5, "lr", "counter"),
                                   schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                                            HANDLE))
        host.addresses["counter"] = counter.url
        node = self.client(self.serving(host))
        self.assertEqual(node.ask_counter(3), 3)
        self.assertEqual(self.line(host), "address counter")
        self.assertEqual(node.ask_counter(4), 7)
        self.assertEqual(host.asked, ["counter"])  # once: the client is kept
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    def test_a_node_the_host_does_not_know(self):
        process, host = self.start(declared=None, args=(0.5, "lr", "nowhere"),
                                   schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                                            HANDLE))
        node = self.client(self.serving(host))
        with self.assertRaises(lp.RemoteError) as raised:
            node.ask_counter(3)
        self.assertIn("LookupError: no address for node 'nowhere': no node nowhere in this program",
                      raised.exception.message)

    def test_address_requests_go_one_at_a_time(self):
        a, b = self.counter(), self.counter()
        process, host = self.start(cls="Pair", declared=None, args=("a", "b"),
                                   schemas=(HANDLE, HANDLE))
        host.addresses.update(a=a.url, b=b.url)
        host.delay = 0.2  # time for a second request to come too soon
        node = self.client(self.serving(host))
        self.assertEqual(node.ask_both(5), 10)
        self.assertEqual(sorted(host.asked), ["a", "b"])
        self.assertFalse(host.overlapped, "a request was sent before the last one's reply")

    def test_run_waits_for_the_hosts_word(self):
        process, host = self.start(cls="Runner", declared=None, args=(), schemas=(),
                                   has_run=True, run_on_serving=False)
        self.serving(host)
        # Every other node of the program may not serve yet: run() waits.
        with self.assertRaises(queue.Empty):
            host.lines.get(timeout=1.0)
        host.say("run")
        self.assertEqual({self.line(host), self.line(host)}, {"stop", "finished"})
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    FINISHER = dict(cls="Finisher", args=(), schemas=(), has_run=True,
                    declared=ADD + [{"name": "stopping", "arity": 0, "signature": "bool stopping()",
                                     "params": [], "result": {"kind": "boolean", "type": "bool"}}],
                    state_schema={"kind": "json", "type": "lp::json"})

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_the_hosts_stop_reaches_run_and_handlers_and_end_waits_for_run(self):
        spec = self.keeping()
        process, host = self.start(**self.FINISHER, checkpoint=spec)
        node = self.client(self.serving(host))
        self.assertFalse(node.stopping())
        host.say("stop")
        give_up = time.monotonic() + 0.1  # as the C++ nodes of its host see theirs
        while not node.stopping():
            self.assertLess(time.monotonic(), give_up, "the stop did not reach a handler")
            time.sleep(0.002)
        # The host's end, as soon as the stop: the node waits for its run()
        # (0.3 s more), and saves what run() did last.
        host.end()
        self.assertEqual(self.ended(process)[0], 0)
        self.assertEqual(self.line(host), "finished")
        self.assertEqual(self.saved(spec["save"])["total"], 1000)

    def test_sigterm_asks_the_host_to_stop_the_program(self):
        process, host = self.start(**self.FINISHER)
        node = self.client(self.serving(host))
        process.send_signal(signal.SIGTERM)
        # As a C++ node process does with a signal from elsewhere: the
        # program's stop, which the host passes on; the node serves on
        # until the host ends it.
        self.assertEqual(self.line(host), "stop")
        self.assertTrue(node.stopping())
        self.assertEqual(self.line(host), "finished")
        self.assertEqual(node.add(1), 1001)
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_without_a_host_sigterm_ends_the_node_after_its_run(self):
        spec = self.keeping()
        process, _ = self.start(**self.FINISHER, checkpoint=spec, control=False)
        self.url_on_stdout(process)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(self.ended(process)[0], 0)
        self.assertEqual(self.saved(spec["save"])["total"], 1000)

    def test_a_peer_that_stops_makes_the_node_follow(self):
        counter = self.counter()
        counter.drain()  # it answers 503 stopping
        process, host = self.start(declared=None, args=(0.5, "lr", "counter"),
                                   schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                                            HANDLE))
        host.addresses["counter"] = counter.url
        node = self.client(self.serving(host))
        with self.assertRaises(lp.RemoteError) as raised:
            node.ask_counter(3)
        self.assertIn("stopping", raised.exception.message)
        self.assertEqual([self.line(host), self.line(host)], ["address counter", "follow"])
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    def test_lines_from_many_threads_arrive_whole(self):
        process, host = self.start(cls="Chatty", declared=None, args=(), schemas=(), has_run=True)
        self.serving(host)
        lines = [self.line(host) for _ in range(801)]
        self.assertEqual(sorted(set(lines)), ["finished", "stop"])
        self.assertEqual(lines.count("stop"), 800)

    def test_a_handle_looks_again_after_its_node_went_away(self):
        first = self.counter()
        process, host = self.start(declared=None, args=(0.5, "lr", "counter"),
                                   schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                                            HANDLE))
        host.addresses["counter"] = first.url
        node = self.client(self.serving(host))
        self.assertEqual(node.ask_counter(3), 3)
        # The counter restarts elsewhere: the old address refuses.
        first.close()
        second = self.counter()
        host.addresses["counter"] = second.url
        with self.assertRaises(lp.RemoteError) as raised:
            node.ask_counter(1)
        self.assertIn("TransportError", raised.exception.message)
        self.assertEqual(node.ask_counter(4), 4)  # the new counter, found by asking again
        self.assertEqual(host.asked, ["counter", "counter"])

    def test_the_hosts_end_stops_the_node(self):
        process, host = self.start(declared=None)
        node = self.client(self.serving(host))
        future = node.futures.slow(1.0)
        self.wait_started()
        host.close()  # as when the host dies
        self.assertIsNone(future.result(timeout=STARTUP))  # the running call ends first
        status, err = self.ended(process)
        self.assertEqual(status, 0)
        self.assertIn("the host closed the control socket", err)

    @unittest.skipUnless(lp.have_cbor(), "a host sends the arguments in CBOR")
    def test_the_spec_and_its_cbor_arguments_come_over_the_socket_and_nothing_is_written(self):
        from launchpad_client._wire import codec
        spec = {"node": "learner", "program": "test", "service": "Learner",
                "module": "learner_module", "class": "Learner", "declared": None,
                "arg_schemas": [{"kind": "floating", "bits": 64}, {"kind": "string"}],
                "secret": SECRET, "host": "127.0.0.1", "has_run": False}
        host_end, node_end = socket.socketpair()
        text, args = json.dumps(spec).encode(), b"".join(codec.encode_cbor([0.25, "lr"]))
        # The spec, its arguments and the host's first line in one piece.
        host_end.sendall(f"spec {len(text)} {len(args)}\n".encode() + text + args + b"run\n")
        process = subprocess.Popen(
            [sys.executable, "-m", "launchpad_client.runtime", "--node=test/learner"],
            env={**os.environ, "PYTHONPATH": os.pathsep.join([self.dir, PACKAGE]),
                 "LP_PYTHON_CONTROL_FD": str(node_end.fileno())},
            pass_fds=(node_end.fileno(),), cwd=self.dir, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        node_end.close()
        host = Host(host_end)
        self.addCleanup(lambda: (process.kill(), process.communicate(timeout=10), host.close()))
        node = self.client(self.serving(host))
        self.assertEqual(node.step(4), 1.0)
        self.assertEqual(sorted(os.listdir(self.dir)), ["learner_module.py"])
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    def test_a_host_that_sends_no_spec(self):
        for sent, why in ((b"", "it closed the socket first"),
                          (b"hello\n", "its first line is b'hello', not `spec <J> <C>`"),
                          (b"spec 100 0\n{}", "it closed the socket after 2 of 100 bytes")):
            with self.subTest(sent=sent):
                host_end, node_end = socket.socketpair()
                host_end.sendall(sent)
                host_end.shutdown(socket.SHUT_WR)
                process = subprocess.run(
                    [sys.executable, "-m", "launchpad_client.runtime", "--node=test/learner"],
                    env={**os.environ, "PYTHONPATH": PACKAGE,
                         "LP_PYTHON_CONTROL_FD": str(node_end.fileno())},
                    pass_fds=(node_end.fileno(),), capture_output=True, text=True,
                    timeout=STARTUP)
                node_end.close()
                host_end.close()
                self.assertEqual(process.returncode, runtime.USAGE)
                self.assertIn(f"the host sent no spec on the control socket: {why}",
                              process.stderr)

    def test_tls_from_the_spec_serves_https_and_calls_peers_over_it(self):
        certificate, key = (os.path.join(self.dir, name) for name in ("tls.crt", "tls.key"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "30", "-subj",
                        "/CN=launchpad-test", "-keyout", key, "-out", certificate],
                       check=True, capture_output=True, timeout=30)
        pem = {"certificate": self.text_of("tls.crt"), "key": self.text_of("tls.key")}
        served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        served.minimum_version = ssl.TLSVersion.TLSv1_3
        served.verify_mode = ssl.CERT_REQUIRED
        served.load_verify_locations(cafile=certificate)
        served.load_cert_chain(certificate, key)
        counter = NodeServer(Counter(), node="counter", program="test", secret=SECRET,
                             tls=served).start()
        self.addCleanup(counter.close)
        process, host = self.start(declared=None, args=(0.5, "lr", "counter"),
                                   schemas=({"kind": "floating", "bits": 64}, {"kind": "string"},
                                            HANDLE), spec_extra={"tls": pem})
        host.addresses["counter"] = counter.url
        url = self.serving(host)
        self.assertTrue(url.startswith("https://"), url)
        node = lp.connect(url, secret=SECRET, tls=lp.tls_context(certificate, certificate, key))
        self.addCleanup(node.close)
        self.assertEqual(node.ask_counter(3), 3)  # and the node's own call, over TLS
        # The key was never a file of the node's: its descriptors hold none.
        pid = process.pid
        files = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        self.assertFalse([f for f in files if f.startswith("/") and not f.startswith("/dev/")],
                         files)
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    def test_a_control_fd_that_is_not_a_socket(self):
        read, write = os.pipe()
        self.addCleanup(os.close, read)
        self.addCleanup(os.close, write)
        process = subprocess.run(
            [sys.executable, "-m", "launchpad_client.runtime", "--node=test/learner"],
            pass_fds=(write,),
            env={**os.environ, "PYTHONPATH": os.pathsep.join([self.dir, PACKAGE]),
                 "LP_PYTHON_CONTROL_FD": str(write)},
            cwd=self.dir, capture_output=True, text=True, timeout=STARTUP)
        self.assertEqual(process.returncode, runtime.USAGE)
        self.assertIn("is not a socket", process.stderr)

    # --- run(). --------------------------------------------------------------

    def test_run_in_python_but_not_declared(self):
        process, _ = self.start(cls="Runner", declared=None, args=(), schemas=(), has_run=False)
        status, err = self.ended(process)
        self.assertEqual(status, runtime.TYPES_DIFFER)
        self.assertIn("declare `void run();` in the C++ interface struct", err)

    def test_run_declared_but_not_in_python(self):
        process, _ = self.start(has_run=True)
        status, err = self.ended(process)
        self.assertEqual(status, runtime.TYPES_DIFFER)
        self.assertIn("C++ declares void run(), and the Python class Learner has no method run: "
                      "add run() to the class", err)

    # --- Checkpoints. --------------------------------------------------------

    def keeping(self, save="ckpt/sub/learner.ckpt", restore=None, interval_ms=0):
        return {"save": os.path.join(self.dir, save),
                "restore": restore and os.path.join(self.dir, restore), "interval_ms": interval_ms}

    def saved(self, path):
        data = checkpoint.read(path, "Learner")
        return None if data is None else checkpoint.decode(data)

    def wait_saved(self, path, total, timeout=STARTUP):
        """Waits until the checkpoint at `path` holds `total`."""
        give_up = time.monotonic() + timeout
        while True:
            state = self.saved(path)
            if state is not None and state["total"] == total:
                return state
            self.assertLess(time.monotonic(), give_up, f"no checkpoint of total {total} in time")
            time.sleep(0.02)

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_saved_every_interval_and_at_the_stop(self):
        spec = self.keeping(interval_ms=50)
        process, host = self.start(**KEEPER, checkpoint=spec)
        node = self.client(self.serving(host))
        self.assertEqual(node.add(5), 5)
        self.assertEqual(self.wait_saved(spec["save"], 5), {"total": 5, "history": [5]})
        self.assertEqual(stat.S_IMODE(os.stat(spec["save"]).st_mode), 0o600)
        for directory in ("ckpt", "ckpt/sub"):
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, directory)).st_mode), 0o700)
        self.assertEqual(node.add(2), 7)
        host.end()
        self.assertEqual(self.ended(process)[0], 0)
        self.assertEqual(self.saved(spec["save"]), {"total": 7, "history": [5, 2]})
        self.assertEqual(os.listdir(os.path.dirname(spec["save"])), ["learner.ckpt"])  # no .tmp

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_saved_at_the_stop_only_and_when_the_host_is_gone(self):
        for stop in ("end", "the host's loss"):
            with self.subTest(stop=stop):
                spec = self.keeping(save=f"{stop}.ckpt")
                process, host = self.start(**KEEPER, checkpoint=spec)
                node = self.client(self.serving(host))
                self.assertEqual(node.add(5), 5)
                self.assertIsNone(self.saved(spec["save"]))  # interval 0: no save while it serves
                if stop == "end":
                    host.end()
                else:
                    host.close()
                self.assertEqual(self.ended(process)[0], 0)
                self.assertEqual(self.saved(spec["save"]), {"total": 5, "history": [5]})

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_restored_before_it_serves(self):
        spec = self.keeping(save="next.ckpt", restore="last.ckpt")
        checkpoint.write(spec["restore"], "Learner", checkpoint.encode({"total": 40, "history": [40]}))
        process, host = self.start(**KEEPER, checkpoint=spec)
        node = self.client(self.serving(host))
        self.assertEqual(node.add(2), 42)
        host.end()
        status, err = self.ended(process)
        self.assertEqual(status, 0)
        self.assertIn(f"[lp] learner restored from {spec['restore']}", err)
        self.assertEqual(self.saved(spec["save"]), {"total": 42, "history": [40, 2]})

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_no_checkpoint_to_restore_starts_empty(self):
        for restore in (None, "missing.ckpt"):
            with self.subTest(restore=restore):
                process, host = self.start(**KEEPER, checkpoint=self.keeping(restore=restore))
                node = self.client(self.serving(host))
                self.assertEqual(node.add(2), 2)
                host.end()
                status, err = self.ended(process)
                self.assertEqual(status, 0)
                self.assertNotIn("restored", err)

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_a_damaged_checkpoint_is_refused(self):
        state = checkpoint.encode({"total": 40, "history": [40]})
        header = f"lp-checkpoint 1\nservice Learner\nbytes {len(state)}\n"
        good_sum = f"fnv1a64 {checkpoint.checksum(state):016x}\n"
        garbage = b"\xff\xff\xff"
        damages = {
            "its checksum does not match its bytes":
                (header + good_sum).encode() + state[:-1] + bytes([state[-1] ^ 1]),
            f"it has {len(state) - 1} bytes of state, its header says {len(state)}":
                (header + good_sum).encode() + state[:-1],
            "no line 'lp-checkpoint ...' where expected": b"not a checkpoint at all",
            "holds the state of a Counter, not of a Learner":
                (header.replace("Learner", "Counter") + good_sum).encode() + state,
            "its state is not CBOR":
                (f"lp-checkpoint 1\nservice Learner\nbytes 3\n"
                 f"fnv1a64 {checkpoint.checksum(garbage):016x}\n").encode() + garbage,
        }
        for why, content in damages.items():
            with self.subTest(why=why):
                spec = self.keeping(restore="damaged.ckpt")
                with open(spec["restore"], "wb") as f:
                    f.write(content)
                process, _ = self.start(**KEEPER, checkpoint=spec)
                status, err = self.ended(process)
                self.assertEqual(status, runtime.CHECKPOINT_UNREADABLE)
                self.assertIn(f"the checkpoint {spec['restore']}", err)
                self.assertIn(why, err)

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_a_save_that_fails_says_why_and_the_node_goes_on(self):
        # The save's directory would be under a file: it cannot be made.
        open(os.path.join(self.dir, "in_the_way"), "w").close()
        spec = self.keeping(save="in_the_way/learner.ckpt", interval_ms=20)
        with open(os.path.join(self.dir, "stderr"), "w") as err:
            process, host = self.start(**KEEPER, checkpoint=spec, stderr=err)
        node = self.client(self.serving(host))
        self.assertEqual(node.add(1), 1)
        give_up = time.monotonic() + STARTUP
        why = ("[lp] learner: no checkpoint saved: cannot create the checkpoint directory "
               f"{self.dir}/in_the_way: a file of that name is in the way")
        while why not in self.text_of("stderr"):
            self.assertLess(time.monotonic(), give_up, "no periodic save failed in time")
            time.sleep(0.02)
        self.assertEqual(node.add(1), 2)  # it goes on serving
        host.end()
        self.assertEqual(self.ended(process)[0], 0)

    def test_half_a_checkpoint_is_a_type_error(self):
        for cls, missing in (("SavesOnly", "no restore(value)"), ("RestoresOnly", "no state()")):
            with self.subTest(cls=cls):
                process, _ = self.start(cls=cls, declared=ADD, args=(), schemas=(),
                                        state_schema=KEEPER["state_schema"])
                status, err = self.ended(process)
                self.assertEqual(status, runtime.TYPES_DIFFER)
                self.assertIn(f"the Python class {cls} has {missing}", err)
                self.assertIn("C++ declares a checkpoint", err)

    def test_a_checkpoint_cpp_does_not_declare_is_a_type_error(self):
        process, _ = self.start(cls="Keeper", declared=ADD, args=(), schemas=())
        status, err = self.ended(process)
        self.assertEqual(status, runtime.TYPES_DIFFER)
        self.assertIn("a checkpoint C++ does not declare", err)
        self.assertIn("`State lp_save() const;`", err)

    @unittest.skipUnless(lp.have_cbor(), "checkpoints are CBOR")
    def test_the_state_is_checked_against_its_declared_type(self):
        spec = self.keeping(interval_ms=20)
        with open(os.path.join(self.dir, "stderr"), "w") as err:
            process, host = self.start(**{**KEEPER, "state_schema": I64}, checkpoint=spec,
                                       stderr=err)
        self.serving(host)
        give_up = time.monotonic() + STARTUP
        while "no checkpoint saved" not in self.text_of("stderr"):
            self.assertLess(time.monotonic(), give_up, "a state of the wrong type was saved")
            time.sleep(0.02)
        self.assertIn("what state() returned", self.text_of("stderr"))
        self.assertIsNone(self.saved(spec["save"]))

    def test_checkpoints_without_cbor2(self):
        process, _ = self.start(**KEEPER, checkpoint=self.keeping(), env={"LP_PYTHON_NO_CBOR": "1"})
        status, err = self.ended(process)
        self.assertEqual(status, runtime.IMPORT_FAILED)
        self.assertIn("apt-get install python3-cbor2", err)

    def test_a_malformed_checkpoint_spec(self):
        process, _ = self.start(**KEEPER, checkpoint={"save": "", "interval_ms": -1})
        status, err = self.ended(process)
        self.assertEqual(status, runtime.USAGE)
        self.assertIn("the spec's checkpoint is malformed", err)

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


class CheckpointFile(unittest.TestCase):
    """The file format, against the C++ library's (detail/checkpoint/checkpoints.hpp)."""

    def test_checksum_is_the_cpp_librarys(self):
        # Printed by a program that includes include/launchpad/detail/checkpoint/
        # checkpoints.hpp and calls lp::detail::checkpoint_checksum.
        known = {b"": 0xcbf29ce484222325, b"a": 0xaf63dc4c8601ec8c, b"\x01": 0xaf63bc4c8601b62c,
                 b"12345678": 0x49f2564e2d0004fc, b"lp-checkpoint": 0xdcacae00d8e4dcf3,
                 b"hello, checkpoint!": 0x28f964a281ae668e, bytes(range(256)): 0x0e87008cc580a025,
                 bytes(range(255)): 0xfbc679b86382aa0a}
        for data, value in known.items():
            with self.subTest(data=data[:20]):
                self.assertEqual(checkpoint.checksum(data), value)

    def test_the_file_is_byte_for_byte_what_cpp_writes(self):
        with tempfile.TemporaryDirectory(prefix="lp-checkpoint-test-") as directory:
            path = os.path.join(directory, "tally", "0.ckpt")
            checkpoint.write(path, "Learner", b"\xa1at\x05")  # {"t": 5}
            with open(path, "rb") as f:
                # What lp::detail::write_checkpoint(path, "Learner", that state) writes.
                self.assertEqual(f.read(), b"lp-checkpoint 1\nservice Learner\nbytes 4\n"
                                           b"fnv1a64 9d1b339702584d94\n\xa1at\x05")
            self.assertEqual(checkpoint.read(path, "Learner"), b"\xa1at\x05")
            self.assertIsNone(checkpoint.read(os.path.join(directory, "none.ckpt"), "Learner"))

    @unittest.skipUnless(lp.have_cbor() and lp.have_numpy(), "numpy arrays as typed arrays")
    def test_numpy_arrays_keep_their_type_and_shape(self):
        import numpy
        matrix = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
        vector = numpy.arange(4, dtype=numpy.int64)
        back = checkpoint.decode(checkpoint.encode({"m": matrix, "v": vector, "n": [1, "x"]}))
        self.assertEqual(back["m"].dtype, numpy.float32)
        self.assertEqual(back["m"].shape, (2, 3))
        numpy.testing.assert_array_equal(back["m"], matrix)
        numpy.testing.assert_array_equal(back["v"], vector)
        self.assertTrue(back["v"].flags.writeable)  # a restore may change it in place
        self.assertEqual(back["n"], [1, "x"])


if __name__ == "__main__":
    unittest.main()
