"""A node that answers garbage, a wrong content type, a truncated body, a
body over the client's limit, or nothing: each is a clear exception, within
the call's timeout, never a hang."""

import json
import socket
import time
import unittest

import launchpad_client as lp
from fake_node import FakeNode, reply

ERROR_CODES = {  # every code of docs/protocol.md#errors, with its status
    "bad_request": 400, "unauthenticated": 401, "no_such_method": 404, "no_such_route": 404,
    "payload_too_large": 413, "unsupported_media_type": 415, "remote_exception": 500,
    "upstream_failed": 502, "stopping": 503, "node_failed": 503,
}


def answer_each_request(make_reply):
    """A script that reads each request and answers `make_reply(head, body)`."""
    def script(peer):
        while (request := peer.read_request()) is not None:
            peer.send(make_reply(*request))
    return script


class BadReplies(unittest.TestCase):
    def fake(self, script):
        node = FakeNode(script)
        self.addCleanup(node.close)
        return node

    def call(self, node, timeout=5.0, **options):
        """An unchecked call (the fake node has no describe) of `echo`."""
        proxy = lp.Node(node.url, "s3cret", label="fake", timeout=timeout, format="json", **options)
        self.addCleanup(proxy.close)
        return proxy.call("echo", 1, check=False)

    def assert_quick(self, started, bound):
        self.assertLess(time.monotonic() - started, bound)

    def test_a_good_reply_and_what_the_client_sent(self):
        seen = []

        def make(head, body):
            seen.append((head, body))
            return reply(200, "application/json", '{"result": [1, 2]}')

        node = self.fake(answer_each_request(make))
        self.assertEqual(self.call(node), [1, 2])
        head, body = seen[0]
        self.assertTrue(head.startswith("POST /lp/v1/call/echo HTTP/1.1\r\n"))
        self.assertIn("Authorization: Bearer s3cret", head)
        self.assertIn("Content-Type: application/json", head)
        self.assertEqual(json.loads(body), [1])

    def test_garbage(self):
        node = self.fake(lambda peer: (peer.read_request(), peer.send(b"\x00\xffgarbage\r\n\r\n")))
        with self.assertRaisesRegex(lp.ProtocolError, r"fake.echo: the reply is not HTTP/1.x.*Launchpad node"):
            self.call(node)

    def test_garbage_without_an_end(self):
        node = self.fake(lambda peer: (peer.read_request(), peer.send(b"x" * 200_000)))
        with self.assertRaisesRegex(lp.ProtocolError, "longer than 65536 bytes, or is not HTTP"):
            self.call(node)

    def test_a_wrong_content_type(self):
        node = self.fake(answer_each_request(
            lambda head, body: reply(200, "text/html", "<html>a login page</html>")))
        with self.assertRaisesRegex(lp.ProtocolError,
                                    r"HTTP 200 with Content-Type 'text/html', not JSON or CBOR "
                                    r"\(body starts b'<html>a login page</html>'\): is http://\S+ a Launchpad node\?"):
            self.call(node)

    def test_a_body_that_does_not_decode(self):
        node = self.fake(answer_each_request(lambda h, b: reply(200, "application/json", '{"result": [1,')))
        with self.assertRaisesRegex(lp.ProtocolError, "the reply's body is not valid JSON"):
            self.call(node)
        if lp.have_cbor():
            node = self.fake(answer_each_request(lambda h, b: reply(200, "application/cbor", b"\xa1\x66result\x9f")))
            with self.assertRaisesRegex(lp.ProtocolError, "the reply's body is not valid CBOR"):
                self.call(node)

    def test_a_value_that_is_not_a_result(self):
        node = self.fake(answer_each_request(lambda h, b: reply(200, "application/json", '[1, 2]')))
        with self.assertRaisesRegex(lp.ProtocolError, r"the reply is not \{\"result\": \.\.\.\}: list \[1, 2\]"):
            self.call(node)

    def test_an_error_status_without_a_protocol_error(self):
        node = self.fake(answer_each_request(lambda h, b: reply(502, "application/json", '{"oops": 1}')))
        with self.assertRaisesRegex(lp.ProtocolError, "HTTP 502 with a body that is not a Launchpad error"):
            self.call(node)

    def test_a_truncated_body(self):
        def script(peer):
            peer.read_request()
            peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                      b'{"result": 1')
        node = self.fake(script)
        started = time.monotonic()
        with self.assertRaisesRegex(lp.TransportError,
                                    "the connection closed after 12 of the 100 bytes of the reply's body"):
            self.call(node)
        self.assert_quick(started, 2)

    def test_a_body_over_the_clients_limit_is_not_read(self):
        def script(peer):
            peer.read_request()
            peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 10000000000\r\n\r\n")
            peer.hold(3)  # and sends nothing more: reading would hang
        node = self.fake(script)
        started = time.monotonic()
        with self.assertRaisesRegex(lp.ReplyTooLarge,
                                    "the reply's body has 10000000000 bytes, over this client's limit "
                                    "of 1048576 \\(max_reply_bytes\\)"):
            self.call(node, max_reply_bytes=1 << 20)
        self.assert_quick(started, 1)

    def test_chunked_and_unframed_replies(self):
        def chunked(peer):
            while peer.read_request() is not None:
                peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"res\r\n9;ext=1\r\nult\": 42}\r\n0\r\n\r\n")
        self.assertEqual(self.call(self.fake(chunked)), 42)

        def until_close(peer):
            peer.read_request()
            peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"result\": 7}")
        self.assertEqual(self.call(self.fake(until_close)), 7)

        def chunked_too_much(peer):
            peer.read_request()
            peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n" + b"fffff\r\n")
            peer.hold(3)
        with self.assertRaises(lp.ReplyTooLarge):
            self.call(self.fake(chunked_too_much), max_reply_bytes=1000)

    def test_silence_ends_at_the_deadline(self):
        def silent(peer):
            peer.read_request()
            peer.hold(5)
        node = self.fake(silent)
        started = time.monotonic()
        with self.assertRaisesRegex(lp.DeadlineExceeded, r"fake.echo: no whole reply from \S+ within 0.3 s"):
            self.call(node, timeout=0.3)
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assert_quick(started, 1.5)

    def test_a_trickle_ends_at_the_deadline_too(self):
        def trickle(peer):
            peer.read_request()
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            for byte in head + b" " * 1000:  # each byte well inside any per-read timeout
                peer.send(bytes([byte]))
                if peer.hold(0.02):
                    return
        node = self.fake(trickle)
        started = time.monotonic()
        with self.assertRaises(lp.DeadlineExceeded):
            self.call(node, timeout=0.5)
        self.assert_quick(started, 1.5)

    def test_a_node_that_does_not_accept(self):
        # A full backlog: connect() itself has to wait.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        listener.close()
        proxy = lp.Node(f"http://127.0.0.1:{port}", label="gone", format="json")
        self.addCleanup(proxy.close)
        with self.assertRaisesRegex(lp.TransportError,
                                    r"gone.echo: http://127.0.0.1:\d+: the connection was refused: "
                                    "is the node still running\\?"):
            proxy.call("echo", check=False)

    def test_every_error_code(self):
        for code, status in ERROR_CODES.items():
            with self.subTest(code=code):
                body = json.dumps({"error": {"code": code, "message": f"about {code} ✓",
                                             "node": "counter", "method": "add"}})
                node = self.fake(answer_each_request(lambda h, b: reply(status, "application/json", body)))
                with self.assertRaises(lp.RemoteError) as caught:
                    self.call(node)
                error = caught.exception
                self.assertEqual((error.node, error.method, error.code, error.status),
                                 ("counter", "add", code, status))
                self.assertEqual(error.message, f"about {code} ✓")
                self.assertEqual(str(error), f"counter.add failed ({code}, HTTP {status}): about {code} ✓")

    def test_the_node_learns_the_deadline_and_may_give_up_at_it(self):
        heads = []
        body = json.dumps({"error": {"code": "deadline_exceeded", "message": "waited 700 ms for items",
                                     "node": "replay", "method": "sample"}})
        def gives_up(head, _):
            heads.append(head)
            return reply(504, "application/json", body)
        node = self.fake(answer_each_request(gives_up))
        with self.assertRaises(lp.DeadlineExceeded) as caught:
            self.call(node, timeout=0.7)
        self.assertIn("Lp-Deadline-Ms: 700\r\n", heads[0] + "\r\n")
        self.assertEqual((caught.exception.node, caught.exception.method), ("replay", "sample"))
        self.assertEqual(str(caught.exception), "replay.sample: waited 700 ms for items")

    def test_a_pooled_connection_the_node_closed_is_retried_once(self):
        # Each reply keeps the connection alive in words, then the node hangs up.
        def one_call_per_connection(peer):
            peer.read_request()
            peer.send(reply(200, "application/json", '{"result": "ok"}'))
            peer.sock.shutdown(socket.SHUT_RDWR)
        node = self.fake(one_call_per_connection)
        proxy = lp.Node(node.url, label="fake", format="json")
        self.addCleanup(proxy.close)
        for _ in range(5):
            self.assertEqual(proxy.call("echo", check=False), "ok")
        self.assertEqual(node.connections, 5)

        # A node that reads a call and hangs up: the call fails, once.
        def read_and_hang_up(peer):
            peer.read_request()
        node = self.fake(read_and_hang_up)
        with self.assertRaisesRegex(lp.TransportError, "the node closed the connection"):
            self.call(node)
        self.assertEqual(node.connections, 1)

    def test_keep_alive(self):
        node = self.fake(answer_each_request(lambda h, b: reply(200, "application/json", '{"result": 1}')))
        proxy = lp.Node(node.url, label="fake", format="json")
        self.addCleanup(proxy.close)
        for _ in range(20):
            proxy.call("echo", check=False)
        self.assertEqual(node.connections, 1)


if __name__ == "__main__":
    unittest.main()
