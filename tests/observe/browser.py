"""Headless chromium driven over the DevTools protocol, for the status page
tests: the page opened at a chosen window width, the launch's secret pasted
into its box as a user does (never on a command line, where ps shows it),
script run in the page, screenshots, and every console message and script
error the page caused.

The protocol goes over a pair of pipes (--remote-debugging-pipe: chromium
reads commands on its fd 3 and writes answers on its fd 4, each a JSON
message ended by a NUL byte), so the test needs no port and no library.
"""

import base64
import fcntl
import json
import os
import select
import struct
import subprocess
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--hide-scrollbars", "--remote-debugging-pipe"]


class Browser:
    """One chromium with one tab; every wait bounded."""

    def __init__(self, binary, profile, width=1400, height=900):
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()

        def onto_3_and_4():
            # Above 4 first: either end may be fd 3 or 4 already.
            reads, writes = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser))
            os.dup2(reads, 3)
            os.dup2(writes, 4)

        self._log = open(os.path.join(profile, "chromium.log"), "wb")
        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                        preexec_fn=onto_3_and_4, close_fds=False)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.problems = []  # console messages, script errors, failed loads
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=True)
        self.resize(width, height)

    def close(self):
        try:
            self.send("Browser.close")
        except (OSError, AssertionError):
            pass
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        for fd in (self._commands, self._answers):
            os.close(fd)
        self._log.close()

    def send(self, method, session=False, timeout=30, **params):
        """The result of one protocol command; fails on its error."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        give_up = time.monotonic() + timeout
        while True:
            reply = self._read(give_up, method)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self._note(reply)

    def _read(self, give_up, waiting_for):
        while b"\0" not in self._buffer:
            if self.process.poll() is not None:
                raise AssertionError(f"chromium exited ({self.process.returncode}) during {waiting_for}")
            if time.monotonic() > give_up:
                raise AssertionError(f"chromium did not answer {waiting_for}")
            ready, _, _ = select.select([self._answers], [], [], 0.5)
            if ready:
                self._buffer += os.read(self._answers, 1 << 20)
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _note(self, event):
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.problems.append("script error: " + details.get("exception", {}).get("description", details["text"]))
        elif method == "Runtime.consoleAPICalled":
            self.problems.append(f"console.{params['type']}: " +
                                 " ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            self.problems.append(f"log: {params['entry']['text']} ({params['entry'].get('url', '')})")

    def resize(self, width, height=900):
        self.width = width
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def open(self, url):
        self.send("Page.navigate", session=True, url=url)
        # The address as far as the fragment, which the page may change.
        here = json.dumps(url.split("#")[0])
        self.wait_for(f"{here} loaded", f"location.href.split('#')[0] === {here} && document.readyState === 'complete'")

    def evaluate(self, expression):
        """The value of a script expression (awaited if a promise) in the page."""
        result = self.send("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, f"{expression}: {result['exceptionDetails']}"
        return result["result"].get("value")

    def wait_for(self, what, expression, timeout=20):
        """The first true value of `expression`, else fails naming `what`."""
        give_up = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > give_up:
                raise AssertionError(f"{what}: not within {timeout:g} s")
            time.sleep(0.1)

    def paste_secret(self, secret):
        """Pastes the secret into the page's box and submits it, as a user does."""
        self.evaluate("document.getElementById('secret').focus()")
        self.send("Input.insertText", session=True, text=secret)
        self.evaluate("document.getElementById('login-form').requestSubmit()")

    def dom(self):
        return self.evaluate("document.documentElement.outerHTML")

    def screenshot(self, path):
        """The whole page, as wide as the window, into `path`; returns its (width, height)."""
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        shot = self.send("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1})
        data = base64.b64decode(shot["data"])
        with open(path, "wb") as f:
            f.write(data)
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
        return struct.unpack(">II", data[16:24])
