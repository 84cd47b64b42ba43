"""A loopback server that answers as a script says: garbage, a wrong
Content-Type, a truncated body, silence, a trickle, or a describe reply of
its own. It stands in for a broken or hostile node, or for a node whose
methods no C++ program has, so the client's answers to each can be
tested."""

import socket
import ssl
import threading


class Peer:
    """One accepted connection, as a script sees it."""

    def __init__(self, sock, stopped):
        self.sock = sock
        self.stopped = stopped
        self.sock.settimeout(10)  # a script never waits forever
        self.buffer = b""

    def read_request(self):
        """The next request's head and body (Content-Length framed); None when
        the client has closed the connection."""
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buffer += data
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            data = self.sock.recv(65536)
            if not data:
                return None
            rest += data
        self.buffer = rest[length:]
        return head.decode("latin-1"), rest[:length]

    def send(self, data):
        self.sock.sendall(data)

    def hold(self, seconds):
        """Waits `seconds`, or less if the fake node is closing; True if it is."""
        return self.stopped.wait(seconds)


def method_entry(name, params, result):
    """A method as describe lists it: the schemas of its parameters and of
    its result (docs/protocol.md#introspection), without the "signature"
    spelling, which the client never needs."""
    return {"name": name, "arity": len(params), "params": params, "result": result}


def describe_reply(label, methods, service="fake::Service"):
    """The body of a node's `GET /lp/v1/describe` reply."""
    return {"program": "fake", "node": label, "service": service, "protocol": 1, "methods": methods}


def reply(status, content_type, body, extra=""):
    """The bytes of an HTTP/1.1 reply with Content-Length."""
    if isinstance(body, str):
        body = body.encode()
    return (f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


class FakeNode:
    """Serves `script(peer)` on every connection, each on a thread."""

    def __init__(self, script, tls=None):
        """`tls`: an ssl.SSLContext to serve with (https://), else plain HTTP."""
        self.script = script
        self.tls = tls
        self.handshake_failures = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # the accept loop looks at _stopping this often
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        self.requests = []
        self._peers = []
        self._stopping = threading.Event()
        self._threads = []
        self._lock = threading.Lock()
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)

    def _accept(self):
        while not self._stopping.is_set():
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sock.settimeout(None)
            if self.tls:
                sock.settimeout(10)
                try:
                    sock = self.tls.wrap_socket(sock, server_side=True)
                except (ssl.SSLError, OSError) as e:
                    self.handshake_failures.append(str(e))
                    sock.close()
                    continue
            with self._lock:
                self.connections += 1
                peer = Peer(sock, self._stopping)
                self._peers.append(peer)
            thread = threading.Thread(target=self._serve, args=(peer,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, peer):
        try:
            self.script(peer)
        except OSError:
            pass  # the client gave up: what the tests want to see
        finally:
            peer.sock.close()

    def close(self):
        self._stopping.set()
        self._threads[0].join(5)
        self.listener.close()
        with self._lock:
            for peer in self._peers:
                try:
                    peer.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
