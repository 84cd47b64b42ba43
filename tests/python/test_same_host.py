"""A Python node and a Python client on one host (issue 51): the node's unix
socket (docs/protocol.md#on-one-host) and the shared memory of large arrays
(docs/protocol.md#bulk-data-through-shared-memory), both ways, in one
process: the node served by NodeServer, called by the client with the
socket's path, and by hand with descriptors of every wrong kind."""

import array
import fcntl
import gc
import json
import mmap
import os
import shutil
import socket
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import launchpad_client as lp
from launchpad_client._wire import shared_memory
from launchpad_client._packages import cbor2, numpy as np
from launchpad_client.server import NodeServer

SECRET = "0123456789abcdef0123456789abcdef"


class Arrays:
    def __init__(self):
        self.kept = []

    def echo(self, values: list[lp.float32]) -> list[lp.float32]:
        return values

    def read_only(self, values: list[lp.float32]) -> bool:
        return not values.flags.writeable

    def keep(self, values: list[lp.float32]) -> int:
        self.kept.append(values)
        return len(self.kept)

    def first_kept(self, i: int) -> lp.float32:
        return float(self.kept[i][0])


def segments_not_its_own():
    """The shared memory this process holds that is not its own pool's: the
    memfd segments it has a descriptor of or maps, as lines saying which."""
    pool = shared_memory.pool()
    own, others = set(), []
    for name in os.listdir("/proc/self/fd"):
        path = f"/proc/self/fd/{name}"
        try:
            target = os.readlink(path)
            about = os.stat(path)
        except OSError:
            continue  # the listing's own, closed since
        if "memfd:launchpad" not in target:
            continue
        if pool.own((about.st_dev, about.st_ino)) is not None:
            own.add(about.st_ino)
        else:
            others.append(f"descriptor {name}: {target}")
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "memfd:launchpad" in line and int(line.split()[4]) not in own:
                others.append(f"mapping {line.strip()}")
    return others


def settled(check, seconds=10.0):
    """check()'s result once it is empty, or after `seconds`."""
    give_up = time.monotonic() + seconds
    while True:
        gc.collect()
        left = check()
        if not left or time.monotonic() > give_up:
            return left
        time.sleep(0.05)


# A peer in a process of its own, which the tests kill with SIGKILL in the
# middle of its transfers: a node (argv: socket path) or a caller (argv:
# URL, socket path) of 4 MB echoes, printing a line once they run.
PEER = textwrap.dedent("""
    import sys, time
    import launchpad_client as lp
    from launchpad_client._packages import numpy as np
    from launchpad_client.server import NodeServer
    SECRET = "0123456789abcdef0123456789abcdef"

    class Arrays:
        def echo(self, values: list[lp.float32]) -> list[lp.float32]:
            return values

    if len(sys.argv) == 2:
        server = NodeServer(Arrays(), node="peer", program="test", secret=SECRET,
                            socket_path=sys.argv[1]).start()
        print(server.url, flush=True)
        time.sleep(120)
    else:
        node = lp.Node(sys.argv[1], SECRET, label="arrays", socket_path=sys.argv[2])
        values = np.arange(1 << 20, dtype=np.float32)
        for i in range(5000):
            node.echo(values)
            if i == 3:
                print("echoing", flush=True)
""")


def needs_numpy_and_cbor(test):
    return unittest.skipIf(np is None or cbor2 is None, "needs numpy and cbor2")(test)


@needs_numpy_and_cbor
class SameHost(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="lp-test-same-host-")
        os.chmod(self.dir, 0o700)
        self.path = os.path.join(self.dir, "arrays.sock")
        self.target = Arrays()
        self.server = NodeServer(self.target, node="arrays", program="test", secret=SECRET,
                                 socket_path=self.path).start()
        self.client = lp.Node(self.server.url, SECRET, label="arrays", socket_path=self.path)

    def tearDown(self):
        self.client.close()
        self.server.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_the_socket_is_its_users_and_goes_with_the_node(self):
        mode = os.stat(self.path).st_mode
        self.assertTrue(stat.S_ISSOCK(mode))
        self.assertEqual(mode & 0o777, 0o600)
        self.server.close()
        self.assertFalse(os.path.exists(self.path))

    def test_large_arrays_go_through_shared_memory_and_come_back(self):
        pool = shared_memory.pool()
        values = np.arange(1 << 20, dtype=np.float32)
        self.assertTrue(np.array_equal(self.client.echo(values), values))  # learns: takes segments
        before = pool.figures()
        for _ in range(10):
            back = self.client.echo(values)
            self.assertTrue(np.array_equal(back, values))
            self.assertFalse(back.flags.writeable)  # a view of the node's segment
            del back
        # The node counts its reply's segment once the reply is sent, which
        # may be after this end read it: a small call after it waits for that.
        self.client.echo(np.zeros(4, dtype=np.float32))
        after = pool.figures()
        self.assertGreaterEqual(after["messages"], before["messages"] + 20)
        self.assertEqual(after["bytes"], before["bytes"])  # none made anew
        self.assertEqual(after["kept"], before["kept"])
        self.assertEqual(after["fallbacks"], before["fallbacks"])
        # The method's arrays are views too.
        self.assertTrue(self.client.read_only(values))

    def test_an_array_kept_keeps_its_segment_which_is_never_written_again(self):
        pool = shared_memory.pool()
        self.client.echo(np.zeros(1 << 16, dtype=np.float32))
        kept = pool.figures()["kept"]
        self.client.keep(np.full(1 << 18, 1000, dtype=np.float32))
        self.client.keep(np.full(1 << 18, 2000, dtype=np.float32))
        for _ in range(5):
            self.client.echo(np.full(1 << 18, 7, dtype=np.float32))
        self.assertEqual(self.client.first_kept(0), 1000)
        self.assertEqual(self.client.first_kept(1), 2000)
        self.assertGreaterEqual(pool.figures()["kept"], kept + 2)

    def peer(self, *argv):
        """The PEER script in a process of its own, and its first line."""
        process = subprocess.Popen([sys.executable, "-c", PEER, *argv], stdout=subprocess.PIPE,
                                   text=True)
        self.addCleanup(process.wait)
        self.addCleanup(process.kill)
        line = process.stdout.readline().strip()  # within the suite's bound
        process.stdout.close()
        self.assertTrue(line, "the peer ended before it said anything")
        return process, line

    def test_a_caller_killed_mid_transfer_leaves_nothing_in_the_node(self):
        self.assertEqual(segments_not_its_own(), [])
        shm = sorted(os.listdir("/dev/shm"))
        process, _ = self.peer(self.server.url, self.path)  # echoing: segments both ways
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        # The node's connection ended: what it mapped of the caller's is let go.
        self.assertEqual(settled(segments_not_its_own), [])
        self.assertEqual(sorted(os.listdir("/dev/shm")), shm)

    def test_a_node_killed_mid_transfer_leaves_nothing_in_the_caller(self):
        self.assertEqual(segments_not_its_own(), [])
        shm = sorted(os.listdir("/dev/shm"))
        path = os.path.join(self.dir, "peer.sock")
        process, url = self.peer(path)
        node = lp.Node(url, SECRET, label="peer", socket_path=path)
        self.addCleanup(node.close)
        values = np.arange(1 << 20, dtype=np.float32)
        back = None
        for _ in range(3):  # the node's replies in its segments from the second on
            back = node.echo(values)
        self.assertFalse(back.flags.writeable)
        del back
        # Killed while calls are under way on another thread.
        failed = []

        def echo():
            try:
                for _ in range(5000):
                    node.echo(values)
            except lp.LaunchpadError as e:
                failed.append(e)

        caller = threading.Thread(target=echo)
        caller.start()
        time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
        caller.join(60)
        self.assertFalse(caller.is_alive())
        self.assertEqual(len(failed), 1)
        self.assertEqual(settled(segments_not_its_own), [])
        self.assertEqual(sorted(os.listdir("/dev/shm")), shm)

    def raw(self, fields, body, fds=(), secret=True):
        """A call by hand on the socket, with `fds` sent along; (status, body)."""
        head = (f"POST /lp/v1/call/echo HTTP/1.1\r\nHost: localhost\r\n"
                f"Content-Type: application/cbor\r\nAccept: application/json\r\n"
                f"Content-Length: {len(body)}\r\n"
                + (f"Authorization: Bearer {SECRET}\r\n" if secret else "") + fields + "\r\n")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(self.path)
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                          array.array("i", fds).tobytes())] if fds else []
            s.sendmsg([head.encode() + body], ancillary)
            reply = b""
            while b"\r\n\r\n" not in reply:
                reply += s.recv(65536)
            head, _, rest = reply.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += s.recv(65536)
        return int(head.split()[1]), json.loads(rest)

    @staticmethod
    def memfd(size, sealed=True):
        fd = os.memfd_create("test", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, size)
        if sealed:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        return fd

    @staticmethod
    def reference_body(index, offset, length):
        reference = cbor2.CBORTag(shared_memory.SHARED_BYTES_TAG, [index, offset, length])
        return cbor2.dumps([cbor2.CBORTag(85, reference)])

    def test_segments_that_are_not_what_they_should_be_get_400(self):
        cases = [
            ("", self.reference_body(0, 0, 16), [], "brought no segment"),
            ("Lp-Segments: 1\r\n", self.reference_body(1, 0, 16), [self.memfd(4096)],
             "a reference to segment 1 of a message that brought 1"),
            ("Lp-Segments: 1\r\n", self.reference_body(0, 4000, 100), [self.memfd(4096)],
             "of a segment of 4096 bytes"),
            ("Lp-Segments: 2\r\n", self.reference_body(0, 0, 16), [self.memfd(4096)],
             "announced 2 segments"),
            ("Lp-Segments: 1\r\n", self.reference_body(0, 0, 16), [self.memfd(4096, False)],
             "not sealed against shrinking"),
            ("Lp-Segments: 1\r\n", self.reference_body(0, 0, 16), [self.memfd(0)],
             "an empty one holds nothing"),
        ]
        read, write = os.pipe()
        os.close(write)
        cases.append(("Lp-Segments: 1\r\n", self.reference_body(0, 0, 16), [read], "not a memfd"))
        for fields, body, fds, part in cases:
            with self.subTest(part):
                status, reply = self.raw(fields, body, fds)
                for fd in fds:
                    os.close(fd)
                self.assertEqual(status, 400)
                self.assertEqual(reply["error"]["code"], "bad_request")
                self.assertIn(part, reply["error"]["message"])
        fd = self.memfd(4096)
        status, reply = self.raw("Lp-Segments: 1\r\n", self.reference_body(0, 64, 16), [fd],
                                 secret=False)
        os.close(fd)
        self.assertEqual(status, 401)
        fd = self.memfd(4096)
        status, reply = self.raw("Lp-Segments: 1\r\n", self.reference_body(0, 64, 16), [fd])
        os.close(fd)
        self.assertEqual((status, reply["result"]), (200, [0.0] * 4))


if __name__ == "__main__":
    unittest.main()
