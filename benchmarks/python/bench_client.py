"""The Python client next to the C++ client and to plain http.client + JSON.

    bench_client.py [--quick] [--peer PATH]

Launches benchmarks/python/peer.cpp (`python_bench_peer`, from a release
build) under local_mt, then, interleaved in one run:

1. a small call, `long add(long)`: median us per blocking call from
   launchpad_client, from the C++ client (lp::client, timed inside the peer
   by its node "driver"), and from http.client with a JSON body on one
   keep-alive connection;
2. an echo of 1M float32 (4 MB), `std::vector<float> echo(...)`: median ms
   per round trip from launchpad_client with numpy arrays (CBOR typed
   arrays), from the C++ client, from launchpad_client in JSON, and from
   http.client + json with a list of 1M numbers.

It prints one table with the ratios (Python / C++, Python / http.client).
Every echo is checked against what was sent. See benchmarks/python/README.md.
"""

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import launchpad_client as lp  # noqa: E402


def fail(message):
    print(f"bench_client: {message}", file=sys.stderr)
    sys.exit(1)


def launch(peer):
    """The peer under local_mt, serving: (process, Program, secret)."""
    log = tempfile.NamedTemporaryFile(prefix="python-bench-", suffix=".log", delete=False)
    process = subprocess.Popen([peer, "--lp_launch=local_mt"], stdout=log, stderr=log,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    give_up = time.monotonic() + 30
    while True:
        text = open(log.name, errors="replace").read()
        found = dict(re.findall(r"\[lp\] (\S+) serving at (\S+)", text))
        secret_line = re.search(r"secret is in (\S+)/secret", text)
        if secret_line and {"bench", "driver"} <= found.keys():
            break
        if process.poll() is not None or time.monotonic() > give_up:
            fail(f"{peer} did not start serving:\n{text}")
        time.sleep(0.05)
    secret = lp.read_secret(secret_line.group(1))
    os.unlink(log.name)
    return process, lp.Program(found, secret), secret


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class PlainJson:
    """What a Python user would write without this package."""

    def __init__(self, url, secret):
        host, port = url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=120)
        self.headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}

    def call(self, method, *args):
        body = json.dumps(list(args))
        try:
            self.connection.request("POST", f"/lp/v1/call/{method}", body, self.headers)
            response = self.connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The node closed the idle connection (after 30 s): http.client
            # opens a new one on the next request.
            self.connection.close()
            self.connection.request("POST", f"/lp/v1/call/{method}", body, self.headers)
            response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            fail(f"http.client: HTTP {response.status}: {body[:200]!r}")
        return json.loads(body)["result"]


def timed(call, repeat, scale):
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * scale)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the rounds (a smoke run)")
    parser.add_argument("--peer", default=os.environ.get(
        "LP_PYTHON_BENCH_PEER", os.path.join(HERE, "..", "..", "build-release", "benchmarks", "python",
                                             "python_bench_peer")))
    options = parser.parse_args()
    if not (lp.have_cbor() and lp.have_numpy()):
        fail("the benchmark compares the numpy and CBOR path: install python3-cbor2 and python3-numpy")
    if not os.access(options.peer, os.X_OK):
        fail(f"no peer program at {options.peer}; build it: meson compile -C build-release "
             "python_bench_peer, or pass --peer")
    import numpy as np

    small_rounds, small_block = (4, 50) if options.quick else (20, 200)
    echo_rounds, slow_every = (3, 3) if options.quick else (15, 5)
    process, program, secret = launch(options.peer)
    try:
        bench, driver = program["bench"], program["driver"]
        plain = PlainJson(bench.url, secret)
        json_bench = lp.Node(bench.url, secret, label="bench", format="json", timeout=300)
        values = np.arange(1 << 20, dtype=np.float32)
        values_list = values.tolist()

        # Warm up every path: connections, the peer's buffers, the heap.
        for _ in range(3):
            bench.add(1), plain.call("add", 1), driver.small_calls(20)
            bench.echo(values), driver.echoes(1, len(values))
        json_bench.echo(values)

        python_small, cpp_small, plain_small = [], [], []
        for _ in range(small_rounds):
            cpp_small.extend(driver.small_calls(small_block).tolist())
            python_small.extend(timed(lambda: bench.add(1), small_block, 1e6))
            plain_small.extend(timed(lambda: plain.call("add", 1), small_block, 1e6))

        python_echo, cpp_echo, json_echo, plain_echo = [], [], [], []
        for i in range(echo_rounds):
            cpp_echo.extend(driver.echoes(1, len(values)).tolist())
            start = time.perf_counter()
            back = bench.echo(values)
            python_echo.append((time.perf_counter() - start) * 1e3)
            if not np.array_equal(back, values):
                fail("the numpy echo differs from what was sent")
            if i % slow_every == 0:  # a second or more each: fewer rounds
                start = time.perf_counter()
                back = json_bench.echo(values)
                json_echo.append((time.perf_counter() - start) * 1e3)
                if not np.array_equal(back, values):
                    fail("the JSON echo differs from what was sent")
                start = time.perf_counter()
                back = plain.call("echo", values_list)
                plain_echo.append((time.perf_counter() - start) * 1e3)
                if back != values_list:
                    fail("the http.client echo differs from what was sent")
        json_bench.close()
    finally:
        program.close()
        stop(process)

    m = statistics.median
    rows = [
        ("small call add(1), median us", m(python_small), [("C++ lp::client", m(cpp_small)),
                                                            ("http.client + json", m(plain_small))]),
        ("echo 1M float32 (4 MB), median ms", m(python_echo), [("C++ lp::client", m(cpp_echo)),
                                                              ("http.client + json", m(plain_echo))]),
        ("echo 1M float32, launchpad_client JSON", m(json_echo), [("http.client + json", m(plain_echo))]),
    ]
    print(f"launchpad_client {lp.__version__} benchmark: python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, peer {os.path.relpath(options.peer)}"
          f"{' (--quick)' if options.quick else ''}")
    print(f"{'benchmark':40} {'python':>8}  {'baseline':20} {'value':>8} {'ratio':>6}")
    for what, ours, baselines in rows:
        for i, (name, theirs) in enumerate(baselines):
            first = i == 0
            print(f"{what if first else '':40} {f'{ours:.4g}' if first else '':>8}  {name:20} "
                  f"{theirs:>8.4g} {ours / theirs:>6.2f}")
    print(f"(ratio = launchpad_client / baseline; {len(python_small)} small calls and "
          f"{len(python_echo)} echoes each way, {len(plain_echo)} JSON echoes)")


if __name__ == "__main__":
    main()
