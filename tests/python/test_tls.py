"""An https:// node: the client presents the launch's certificate and checks
the node's against it; a client without it, or with another launch's, is
refused at the handshake with a message that says why."""

import json
import os
import shutil
import ssl
import subprocess
import tempfile
import unittest

import launchpad_client as lp
from fake_node import FakeNode, describe_reply, reply


def make_credentials(directory, name):
    """A key and a self-signed certificate, as a launch makes them."""
    certificate, key = os.path.join(directory, name + ".crt"), os.path.join(directory, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "30", "-subj", f"/CN=launchpad-{name}", "-keyout", key,
                    "-out", certificate], check=True, capture_output=True, timeout=30)
    return certificate, key


def server_context(certificate, key):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.verify_mode = ssl.CERT_REQUIRED  # the client must present the launch's certificate
    context.load_verify_locations(cafile=certificate)
    context.load_cert_chain(certificate, key)
    return context


def echo_twice(head, body):
    """Answers {"result": 2 * the one argument}, and says what came; a
    describe with no methods."""
    if head.startswith("GET /lp/v1/describe"):
        return reply(200, "application/json", json.dumps(describe_reply("fake", [])))
    value = json.loads(body)[0]
    authorized = "Authorization: Bearer s3cret" in head
    return reply(200, "application/json", json.dumps({"result": [2 * value, authorized]}))


def answer_each_request(make_reply):
    def script(peer):
        while (request := peer.read_request()) is not None:
            peer.send(make_reply(*request))
    return script


@unittest.skipUnless(shutil.which("openssl"), "needs the openssl command (apt-get install openssl)")
class TLS(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="lp-tls-test-")
        cls.launch = make_credentials(cls.directory, "launch")
        cls.other = make_credentials(cls.directory, "other")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.directory)

    def fake(self, script=answer_each_request(echo_twice)):
        node = FakeNode(script, tls=server_context(*self.launch))
        self.addCleanup(node.close)
        return node

    def proxy(self, node, tls, **options):
        proxy = lp.Node(node.url, "s3cret", label="fake", format="json", tls=tls, timeout=5, **options)
        self.addCleanup(proxy.close)
        return proxy

    def test_calls_go_through_with_the_launchs_certificate(self):
        node = self.fake()
        certificate, key = self.launch
        proxy = self.proxy(node, lp.tls_context(certificate, certificate, key))
        self.assertTrue(node.url.startswith("https://"))
        for value in range(3):  # the second and third reuse the connection
            self.assertEqual(proxy.call("twice", value, check=False), [2 * value, True])
        self.assertEqual(node.connections, 1)
        big = "x" * (3 << 20)  # a request and a reply of many TLS records
        self.assertEqual(proxy.call("twice", big, check=False)[0], big * 2)

    def test_a_run_directory_gives_the_credentials(self):
        node = self.fake()
        run_dir = tempfile.mkdtemp(prefix="lp-tls-run-", dir=self.directory)
        shutil.copy(self.launch[0], os.path.join(run_dir, "tls.crt"))
        shutil.copy(self.launch[1], os.path.join(run_dir, "tls.key"))
        with open(os.path.join(run_dir, "secret"), "w") as f:
            f.write("s3cret\n")
        with lp.connect(node.url, run_dir=run_dir, format="json") as proxy:
            self.assertEqual(proxy.call("twice", 4, check=False), [8, True])

    def test_a_client_without_a_certificate_is_refused_at_the_handshake(self):
        node = self.fake()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.load_verify_locations(cafile=self.launch[0])  # trusts the node, presents nothing
        with self.assertRaisesRegex(lp.TransportError, r"the TLS handshake with https://\S+ failed "
                                    r".*does not present this launch's certificate"):
            self.proxy(node, context).call("twice", 1, check=False)

    def test_another_launchs_credentials_are_refused_both_ways(self):
        node = self.fake()
        certificate, key = self.other
        with self.assertRaisesRegex(lp.TransportError, r"presented a certificate that is not this "
                                    r"launch's"):
            self.proxy(node, lp.tls_context(certificate, certificate, key)).call("twice", 1, check=False)
        # Trusting the node but presenting another launch's certificate:
        # the node refuses it.
        with self.assertRaises(lp.TransportError):
            self.proxy(node, lp.tls_context(self.launch[0], certificate, key)).call(
                "twice", 1, check=False)
        self.assertTrue(node.handshake_failures)

    def test_an_https_node_needs_credentials(self):
        with self.assertRaisesRegex(ValueError, r"speaks TLS: give the launch's run directory"):
            lp.Node("https://127.0.0.1:1", "s3cret")

    def test_unusable_files_say_so(self):
        with self.assertRaisesRegex(FileNotFoundError, r"no TLS key file /nonexistent"):
            lp.tls_context(self.launch[0], self.launch[0], "/nonexistent/tls.key")
        with self.assertRaisesRegex(ValueError, r"cannot use the TLS files"):
            lp.tls_context(self.launch[0], self.launch[0], self.other[1])  # key of another cert

    def test_a_silent_node_ends_the_handshake_at_the_deadline(self):
        import socket
        import time
        listener = socket.create_server(("127.0.0.1", 0))  # accepts, never answers the hello
        self.addCleanup(listener.close)
        url = f"https://127.0.0.1:{listener.getsockname()[1]}"
        certificate, key = self.launch
        proxy = lp.Node(url, "s3cret", label="fake", format="json", timeout=0.5,
                        tls=lp.tls_context(certificate, certificate, key))
        self.addCleanup(proxy.close)
        started = time.monotonic()
        with self.assertRaises(lp.DeadlineExceeded):
            proxy.call("twice", 1, check=False)
        self.assertLess(time.monotonic() - started, 3)


if __name__ == "__main__":
    unittest.main()
