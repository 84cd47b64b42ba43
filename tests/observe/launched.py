"""What the observability tests share: launching tests/observe/program (its
path comes from meson in LP_OBSERVE_PROGRAM), HTTP with the launch's
secret, and skipping (exit 77, with the reason) when a tool is missing.
Every wait is bounded; stop() ends the launcher and, with it, its nodes.
"""

import json
import os
import ssl
import shutil
import sys
import time
import urllib.error
import urllib.request

import programs  # tests/python/programs.py: launching and ending a program

SKIP = 77


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


_tls = None  # the launch's certificate and key, for https:// nodes


def use_tls_of(run_dir):
    """Calls to https:// nodes present and trust the launch's certificate
    (`run_dir`'s tls.crt and tls.key), as the Python client does."""
    global _tls
    certificate = os.path.join(run_dir, "tls.crt")
    if os.path.isfile(certificate):
        _tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        _tls.check_hostname = False  # nodes are checked against the certificate, not names
        _tls.load_verify_locations(cafile=certificate)
        _tls.load_cert_chain(certificate, os.path.join(run_dir, "tls.key"))


def _open(request, timeout):
    context = _tls if request.full_url.startswith("https://") else None
    return urllib.request.urlopen(request, timeout=timeout, context=context)


def get(url, secret=None, accept=None, timeout=5):
    """(status, body) of GET url."""
    request = urllib.request.Request(url)
    if secret:
        request.add_header("Authorization", f"Bearer {secret}")
    if accept:
        request.add_header("Accept", accept)
    try:
        with _open(request, timeout) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def call(url, method, args, secret):
    request = urllib.request.Request(f"{url}/lp/v1/call/{method}", data=json.dumps(args).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {secret}"})
    with _open(request, 10) as reply:
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


class Launched(programs.Launched):
    """tests/observe/program under a launch policy (programs.Launched: its
    output in files, bounded waits, its process group ended by stop())."""

    def __init__(self, *flags, policy="local_mp"):
        super().__init__([program(), f"--lp_launch={policy}", *flags])

    def secret(self):
        with open(os.path.join(self.run_dir(), "secret")) as f:
            return f.read().strip()

    def url(self, label, timeout=programs.STARTUP):
        """The node's address, from the run directory's `nodes` file, as
        attach() reads it (the last line of a label holds)."""
        path = os.path.join(self.run_dir(), "nodes")

        def listed():
            try:
                with open(path) as f:
                    found = [line.split() for line in f if line.split()[:1] == [label]]
            except FileNotFoundError:
                return None
            return found[-1][1] if found else None
        return wait_until(f"{label} in {path}", listed, timeout)

    def status_url(self):
        return self.wait_for(r"\[lp\] status at (\S+)").group(1)
