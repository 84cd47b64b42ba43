"""Calls to real nodes: what the proxy knows from describe, errors the node
answers (each code it can give), the secret, deadlines, futures, threads and
stopping the program."""

import concurrent.futures
import inspect
import threading
import time
import unittest

import launchpad_client as lp
from programs import launch_wire_types


def setUpModule():
    global launched, program
    launched, program = launch_wire_types()
    unittest.addModuleCleanup(launched.stop)
    unittest.addModuleCleanup(program.close)


def secret():
    return lp.read_secret(launched.run_dir())


class Proxies(unittest.TestCase):
    def test_methods_come_from_describe(self):
        calls = program["calls"]
        self.assertEqual(calls.service, "wire_types::Calls")
        self.assertEqual(calls.program, "wire_types")
        self.assertEqual(calls.label, "calls")
        self.assertEqual(calls.method_names(), ["add", "bump", "fail", "sleep_ms", "twice"])
        self.assertIn("add", dir(calls))
        self.assertTrue(calls.add.__doc__.startswith("long int add(long int, long int)"))
        self.assertIn("Batched: the node invokes it once for up to 8 concurrent callers", calls.twice.__doc__)
        self.assertEqual(str(inspect.signature(calls.add)),
                         "(arg1: 'long int', arg2: 'long int', /, *, timeout=None) -> 'long int'")
        self.assertEqual(repr(calls), f"<launchpad_client.Node calls (wire_types::Calls) at {calls.url}>")

    def test_connect_by_url_learns_the_label(self):
        with lp.connect(program["tallies/1"].url, run_dir=launched.run_dir()) as node:
            self.assertEqual(node.label, "tallies/1")
            self.assertEqual(node.add(5), 5)
            self.assertEqual(node.get(), 5)
        self.assertEqual(program.group("tallies")[1].get(), 5)

    def test_arity_and_types_are_checked_before_sending(self):
        calls = program["calls"]
        with self.assertRaisesRegex(TypeError, r"add\(\) takes 2 arguments \(long int, long int\), got 1"):
            calls.add(1)
        with self.assertRaisesRegex(TypeError, r"argument 2 of add: expected an integer \(long int\), got str 'x'"):
            calls.add(1, "x")
        with self.assertRaisesRegex(TypeError, r"argument 1 of add: expected an integer \(long int\), got bool True"):
            calls.add(True, 1)
        with self.assertRaisesRegex(ValueError, r"argument 1 of add: 9223372036854775808 is out of range"):
            calls.add(2**63, 1)
        with self.assertRaisesRegex(AttributeError, "node 'calls' \\(service wire_types::Calls\\) has no "
                                    "method 'ad'; its methods: add, bump, fail, sleep_ms, twice"):
            calls.ad(1, 2)

    def test_batched_methods_take_one_element(self):
        calls = program["calls"]
        futures = [calls.futures.twice(i) for i in range(20)]
        self.assertEqual([f.result(timeout=30) for f in futures], [2 * i for i in range(20)])


class NodeErrors(unittest.TestCase):
    def test_a_method_that_throws(self):
        with self.assertRaises(lp.RemoteError) as caught:
            program["calls"].fail("it broke: ✗")
        error = caught.exception
        self.assertEqual((error.node, error.method, error.code, error.status),
                         ("calls", "fail", "remote_exception", 500))
        self.assertEqual(error.message, "it broke: ✗")

    def test_bad_request_names_the_argument(self):
        with self.assertRaises(lp.RemoteError) as caught:
            program["calls"].call("add", 1, "x", check=False)
        self.assertEqual((caught.exception.code, caught.exception.status), ("bad_request", 400))
        self.assertIn("argument 2 of add", caught.exception.message)

    def test_no_such_method(self):
        with self.assertRaises(lp.RemoteError) as caught:
            program["calls"].call("nope", check=False)
        self.assertEqual((caught.exception.code, caught.exception.status), ("no_such_method", 404))
        self.assertIn("add, bump", caught.exception.message)

    def raw(self, verb, path, body=b"", content_type="application/json"):
        node = program["calls"]
        reply = node._shared.transport.request(verb, path, [body] if verb == "POST" else (),
                                               content_type=content_type, accept="application/json")
        return node._body(reply, "")

    def test_no_such_route_and_unsupported_media_type(self):
        with self.assertRaises(lp.RemoteError) as caught:
            self.raw("GET", "/lp/v1/nothing")
        self.assertEqual((caught.exception.code, caught.exception.status), ("no_such_route", 404))
        with self.assertRaises(lp.RemoteError) as caught:
            self.raw("POST", "/lp/v1/call/add", b"<a/>", content_type="text/xml")
        self.assertEqual((caught.exception.code, caught.exception.status), ("unsupported_media_type", 415))

    def test_the_secret(self):
        url = program["calls"].url
        with self.assertRaises(lp.RemoteError) as caught:
            lp.connect(url)
        error = caught.exception
        self.assertEqual((error.code, error.status, error.node), ("unauthenticated", 401, "calls"))
        self.assertIn("Authorization: Bearer", error.message)
        with self.assertRaisesRegex(lp.RemoteError, "not this launch's secret"):
            lp.connect(url, secret="0" * 32)
        # A proxy made without describe learns it from its first call.
        unchecked = lp.Node(url, "f" * 32, label="calls")
        self.addCleanup(unchecked.close)
        with self.assertRaises(lp.RemoteError) as caught:
            unchecked.call("add", 1, 2, check=False)
        self.assertEqual((caught.exception.code, caught.exception.method), ("unauthenticated", "add"))
        self.assertEqual(unchecked.health(), "serving")  # health needs no secret


class Deadlines(unittest.TestCase):
    def test_a_call_past_its_timeout(self):
        calls = program["calls"]
        for quick, call in ((calls.with_timeout(0.3), lambda n: n.sleep_ms(3000)),
                            (calls, lambda n: n.sleep_ms(3000, timeout=0.3))):
            started = time.monotonic()
            with self.assertRaises(lp.DeadlineExceeded) as caught:
                call(quick)
            took = time.monotonic() - started
            self.assertGreaterEqual(took, 0.3)
            self.assertLess(took, 2.0)
            self.assertEqual((caught.exception.node, caught.exception.method), ("calls", "sleep_ms"))
        self.assertEqual(calls.add(1, 2), 3)  # the proxy still works


class Futures(unittest.TestCase):
    def test_many_futures(self):
        calls = program["calls"]
        before = calls.bump()
        futures = [calls.futures.bump() for _ in range(200)]
        done, pending = concurrent.futures.wait(futures, timeout=60)
        self.assertFalse(pending)
        self.assertEqual(sorted(f.result() for f in futures), list(range(before + 1, before + 201)))

    def test_errors_arrive_through_the_future(self):
        calls = program["calls"]
        with self.assertRaisesRegex(TypeError, "argument 2 of add"):
            calls.futures.add(1, "x")  # raised at once, nothing sent
        future = calls.futures.fail("later")
        with self.assertRaisesRegex(lp.RemoteError, "later"):
            future.result(timeout=30)
        future = calls.futures.sleep_ms(3000, timeout=0.2)
        self.assertIsInstance(future.exception(timeout=30), lp.DeadlineExceeded)
        self.assertEqual(calls.futures.call("add", 2, 3).result(timeout=30), 5)

    def test_arguments_are_copied_when_submitted(self):
        if not lp.have_numpy():
            self.skipTest("numpy is not installed (or hidden)")
        import numpy as np
        arrays = program["arrays"]
        values = np.arange(100_000, dtype=np.float32)  # large enough to go as a view
        future = arrays.futures.echo_f32(values)
        values[:] = -1  # after submitting: the call must not see it
        self.assertEqual(float(future.result(timeout=30)[5]), 5.0)

    def test_threads_share_a_proxy(self):
        tally = program.group("tallies")[0]
        start = tally.get()
        errors = []

        def work():
            try:
                for _ in range(50):
                    tally.add(1)
            except Exception as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(tally.get(), start + 200)


class LimitsAndStopping(unittest.TestCase):
    """Each test launches a program of its own, which it stops."""

    def test_payload_too_large(self):
        small_launch, small = launch_wire_types("--lp_max_body_mb=1")
        self.addCleanup(small_launch.stop)
        self.addCleanup(small.close)
        with self.assertRaises(lp.RemoteError) as caught:
            small["arrays"].echo_u8(b"\x01" * (2 << 20))
        self.assertEqual((caught.exception.code, caught.exception.status), ("payload_too_large", 413))
        self.assertEqual(small["arrays"].echo_u8(b"\x01\x02").tolist() if lp.have_numpy()
                         else small["arrays"].echo_u8(b"\x01\x02"), [1, 2])

    def test_stop_the_program_and_stopping(self):
        run, prog = launch_wire_types()
        self.addCleanup(run.stop)
        self.addCleanup(prog.close)
        calls = prog["calls"]
        slow = calls.futures.sleep_ms(4000)
        time.sleep(0.3)  # the slow call runs: the node drains it before it closes
        prog.stop()
        stopping = None
        give_up = time.monotonic() + 8
        while stopping is None and time.monotonic() < give_up:
            try:
                calls.add(1, 2)
                time.sleep(0.01)
            except lp.RemoteError as e:
                stopping = e
        self.assertIsNotNone(stopping, "no call was refused while the node drained")
        self.assertEqual((stopping.code, stopping.status, stopping.method), ("stopping", 503, "add"))
        self.assertIsNone(slow.result(timeout=30))  # the running call finished
        self.assertEqual(run.wait_exit(30), 0, run.output()[-2000:])
        with self.assertRaises(lp.TransportError):
            calls.add(1, 2)


if __name__ == "__main__":
    unittest.main()
