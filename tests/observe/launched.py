"""What the observability tests share: launching tests/observe/program (its
path comes from meson in LP_OBSERVE_PROGRAM), HTTP with the launch's
secret, and skipping (exit 77, with the reason) when a tool is missing.
Every wait is bounded; stop() ends the launcher and, with it, its nodes.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77
STARTUP = 30.0  # seconds a launch may take to serve, on 2 busy cores


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def need_tool(name, package):
    path = shutil.which(name)
    if not path:
        skip(f"{name} is not installed (apt-get install {package}); .ci/run installs it")
    return path


def program():
    path = os.environ.get("LP_OBSERVE_PROGRAM", "")
    if not os.access(path, os.X_OK):
        skip(f"LP_OBSERVE_PROGRAM does not name a built program ({path!r}); run through `meson test`")
    return path


def get(url, secret=None, accept=None, timeout=5):
    """(status, body) of GET url."""
    request = urllib.request.Request(url)
    if secret:
        request.add_header("Authorization", f"Bearer {secret}")
    if accept:
        request.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def call(url, method, args, secret):
    request = urllib.request.Request(f"{url}/lp/v1/call/{method}", data=json.dumps(args).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {secret}"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())["result"]


def wait_until(what, check, timeout):
    """check()'s first true value within `timeout` seconds, else fails naming `what`."""
    give_up = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > give_up:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(0.1)


class Launched:
    def __init__(self, *flags, policy="local_mp"):
        self.dir = tempfile.mkdtemp(prefix="lp-observe-test-")
        self.output_path = os.path.join(self.dir, "output")
        self.argv = [program(), f"--lp_launch={policy}", *flags]
        with open(self.output_path, "wb") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)

    def output(self):
        with open(self.output_path, errors="replace") as out:
            return out.read()

    def wait_for(self, pattern, timeout=STARTUP):
        give_up = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.output())
            if match:
                return match
            if self.process.poll() is not None or time.monotonic() > give_up:
                raise AssertionError(f"{' '.join(self.argv)} did not print {pattern!r}; its "
                                     f"output:\n{self.output()[-3000:]}")
            time.sleep(0.05)

    def run_dir(self):
        return self.wait_for(r"\[lp\] the launch's secret is in (\S+)/secret").group(1)

    def secret(self):
        with open(os.path.join(self.run_dir(), "secret")) as f:
            return f.read().strip()

    def url(self, label):
        return self.wait_for(rf"\[lp\] {re.escape(label)} serving at (\S+)").group(1)

    def status_url(self):
        return self.wait_for(r"\[lp\] status at (\S+)").group(1)

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)
