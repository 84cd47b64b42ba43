"""Real Prometheus against a running program (docs/observability.md).

Launches tests/observe/program under local_mp, makes a known number of calls,
checks that `promtool check metrics` accepts every node's GET /lp/v1/metrics,
then runs Debian's prometheus on loopback with a scrape config for the
program's nodes (the launch's secret as the bearer token, from its file) and
checks through the query API that lp_calls_total of the node called equals
the calls made, and that every node, the workers with no method too, has
its samples in every family of calls. Exits 77 when prometheus or promtool
is missing.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

from launched import Launched, call, get, need_tool, wait_until

CALLS = 17
LABELS = ["counter", "recorder", "workers/0", "workers/1"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expression):
    status, body = get(f"http://127.0.0.1:{port}/api/v1/query?" +
                       urllib.parse.urlencode({"query": expression}))
    if status != 200:
        return None
    return json.loads(body)["data"]["result"]


def main():
    prometheus = need_tool("prometheus", "prometheus")
    promtool = need_tool("promtool", "prometheus")
    program = Launched()
    scratch = tempfile.mkdtemp(prefix="lp-prometheus-test-")
    server = None
    try:
        secret = program.secret()
        urls = {label: program.url(label) for label in LABELS}
        for i in range(CALLS):
            assert call(urls["counter"], "add", [1], secret) == i + 1

        for label, url in urls.items():
            status, text = get(url + "/lp/v1/metrics", secret)
            assert status == 200, f"{label}: GET /lp/v1/metrics answered {status}"
            checked = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                     capture_output=True, timeout=30)
            assert checked.returncode == 0, (f"promtool check metrics rejects {label}'s metrics:\n"
                                             f"{checked.stdout}{checked.stderr}\n{text}")
        status, _ = get(urls["counter"] + "/lp/v1/metrics")
        assert status == 401, f"GET /lp/v1/metrics without the secret answered {status}"

        port = free_port()
        targets = [url.removeprefix("http://") for url in urls.values()]
        config = os.path.join(scratch, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: launchpad\n    metrics_path: /lp/v1/metrics\n"
                    "    authorization:\n"
                    f"      credentials_file: {program.run_dir()}/secret\n"
                    f"    static_configs:\n      - targets: {json.dumps(targets)}\n")
        log = open(os.path.join(scratch, "prometheus.log"), "wb")
        server = subprocess.Popen([prometheus, f"--config.file={config}",
                                   f"--storage.tsdb.path={scratch}/data",
                                   f"--web.listen-address=127.0.0.1:{port}"],
                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def scraped():
            if server.poll() is not None:
                raise AssertionError("prometheus exited:\n" +
                                     open(os.path.join(scratch, "prometheus.log")).read()[-3000:])
            try:
                up = query(port, 'up{job="launchpad"}')
                calls = query(port, 'lp_calls_total{node="counter",method="add",code="200"}')
            except OSError:
                return None
            if not up or len(up) != len(targets) or any(r["value"][1] != "1" for r in up):
                return None
            return calls and float(calls[0]["value"][1]) == CALLS and calls
        wait_until(f"prometheus sees every node up and lp_calls_total == {CALLS}", scraped, 60)
        print(f"prometheus scraped {len(targets)} nodes; lp_calls_total of counter.add = {CALLS}")
        # A node with no method is a node all the same: a query by node
        # finds it, at 0.
        for family in ("lp_calls_total", "lp_call_duration_seconds_count", "lp_calls_in_flight",
                       "lp_call_request_bytes_total", "lp_call_reply_bytes_total"):
            found = sorted(r["metric"]["node"] for r in query(port, f"sum by (node) ({family})") or [])
            assert found == sorted(LABELS), f"{family} has samples of {found}, not of every node"
        idle = query(port, 'lp_calls_total{node="workers/0"}')
        assert idle and all(float(r["value"][1]) == 0 for r in idle), idle
        user = query(port, 'ticks_total{node="recorder"}')
        assert user and float(user[0]["value"][1]) > 0, f"no user counter ticks_total: {user}"
    finally:
        if server:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(5)
        program.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
