"""A Launchpad program observed as a C++ program is (docs/observability.md,
docs/coming_from_launchpad.md "Watching it run"): observed.py's
consumer/producers, launched by lp-launchpad, with

- its status page in headless chromium (tests/observe/browser.py), under
  local_mt and local_mp: every node by its label in its group's row, its
  service and state, the calls producer/0 served, and the node that
  raised marked failed;
- its nodes scraped by Debian's prometheus, with the scrape config and the
  targets file of docs/observability.md: every node up, lp_calls_total of
  producer/0's work the calls the consumer made, of each other producer 1,
  the consumer's own counter works_total the same count;
- `lp-launchpad --lp_status=RUN_DIR` (and --lp_json) under local_mp: every
  node with its group and state, the failed one failed; after the
  program, that the directory names no running launch;
- a node of a group with restart_on_failure(1) that fails once under
  local_mp: serving again in a new process, its one restart in
  --lp_status's table and JSON, on the page, and in its
  lp_restarts_total.

Each launch runs in a session and a TMPDIR of its own, which must be empty
after it (the run directory and the description's directory gone), with no
process of its session left. A missing chromium or prometheus skips its
test, unless LP_REQUIRE_CHROMIUM or LP_REQUIRE_PROMETHEUS is set (as
.ci/run does)."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "observe"))
from browser import Browser  # noqa: E402  (tests/observe/browser.py)
from test_launchpad import session_processes  # noqa: E402

STARTUP = 60  # seconds for a launch to serve; it takes 2-10 s here
LEFT_BOUND = 45  # seconds for a stopped launch to be gone
LINGER = 20  # seconds the page of a program that ended stays up (--lp_status_linger_secs)
CALLS = 23
LABELS = ["producer/0", "producer/1", "producer/2", "consumer/0", "doomed/0"]
GROUPS = {"producer/0": "producer", "producer/1": "producer", "producer/2": "producer",
          "consumer/0": "consumer", "doomed/0": "doomed"}
LAUNCHER = os.environ.get("LP_LAUNCHPAD_LAUNCHER", "lp-launchpad")


def tool(name, package, required_by):
    """The tool's path; skips the test without it, unless `required_by` is set."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} is not installed (apt-get install {package}); .ci/run installs it"
    if os.environ.get(required_by):
        raise AssertionError(f"{message}, and {required_by} is set")
    raise unittest.SkipTest(message)


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


def get(url, secret=None, timeout=5):
    """(status, body) of GET url."""
    request = urllib.request.Request(url)
    if secret:
        request.add_header("Authorization", f"Bearer {secret}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def status_command(run_dir, *flags):
    """(exit status, stdout, stderr) of lp-launchpad --lp_status=RUN_DIR FLAGS."""
    done = subprocess.run([LAUNCHER, f"--lp_status={run_dir}", *flags], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


class Launch:
    """observed.py under `launch_type`, as its user runs it: `python3
    observed.py ...` with the script's --lp_* flags."""

    def __init__(self, launch_type, *flags, labels=LABELS):
        self.labels = labels
        self.scratch = tempfile.mkdtemp(prefix="lp-launchpad-observe-")
        self.tmp, self.marks = (os.path.join(self.scratch, d) for d in ("tmp", "marks"))
        os.mkdir(self.tmp)
        os.mkdir(self.marks)
        self.output_path = os.path.join(self.scratch, "output")
        env = dict(os.environ, TMPDIR=self.tmp)
        with open(self.output_path, "w") as output:
            self.process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "observed.py"), launch_type, self.marks,
                 str(CALLS), *flags],
                env=env, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)

    def output(self):
        with open(self.output_path, errors="replace") as f:
            return f.read()

    def wait_for(self, pattern, timeout=STARTUP):
        def found():
            match = re.search(pattern, self.output())
            if not match and self.process.poll() is not None:
                raise AssertionError(f"the script exited ({self.process.returncode}) before "
                                     f"printing {pattern!r}:\n{self.output()[-3000:]}")
            return match
        return wait_until(f"{pattern!r} in the script's output", found, timeout)

    def serving(self):
        """(run directory, secret, status page, {label: url}) once every
        node serves and the consumer made its calls."""
        run_dir = self.wait_for(r"the launch's secret is in (\S+)/secret").group(1)
        page = self.wait_for(r"\[lp\] status at (\S+)").group(1)
        urls = {label: self.wait_for(rf"\[lp\] {re.escape(label)} serving at (\S+)").group(1)
                for label in self.labels}
        wait_until("the consumer's calls", lambda: os.path.exists(os.path.join(self.marks, "called")),
                   STARTUP)
        with open(os.path.join(run_dir, "secret")) as f:
            secret = f.read().strip()
        assert secret not in self.output(), "the secret was printed"
        assert page.startswith("http://127.0.0.1:"), page
        assert all(url.startswith("http://127.0.0.1:") for url in urls.values()), urls
        return run_dir, secret, page, urls

    def fail_doomed(self):
        with open(os.path.join(self.marks, "fail"), "w"):
            pass

    def stop(self):
        """Ends the script as Ctrl+C does; returns (its exit status, what is
        left: files in its TMPDIR, processes of its session)."""
        if self.process.poll() is None:
            # A Ctrl+C while the program runs stops it; its page then stays
            # up for its --lp_status_linger_secs (LINGER, within LEFT_BOUND).
            os.kill(self.process.pid, signal.SIGINT)
        try:
            status = self.process.wait(LEFT_BOUND)
        except subprocess.TimeoutExpired:
            status = None
        give_up = time.monotonic() + LEFT_BOUND
        while session_processes(self.process.pid) and time.monotonic() < give_up:
            time.sleep(0.1)
        # The run directory is /tmp's, not TMPDIR's.
        run_dirs = re.findall(r"the launch's secret is in (\S+)/secret", self.output())
        left = (sorted(os.listdir(self.tmp)) + [d for d in run_dirs if os.path.exists(d)]
                + [f"process {p}" for p in session_processes(self.process.pid)])
        return status, left

    def clean(self):
        """Whatever stop() found left, gone (the test fails on it all the same)."""
        for pid in session_processes(self.process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        for run_dir in re.findall(r"the launch's secret is in (\S+)/secret", self.output()):
            shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


# The graph's nodes as the page draws them: label, state, the text under
# the label ("Service · state") and the group named at the left of its row.
GRAPH = """(() => {
  const rowNames = [...document.querySelectorAll('#graph > text')]
    .map(t => ({name: t.textContent, y: +t.getAttribute('y')}));
  return [...document.querySelectorAll('#graph g.node')].map(g => {
    const box = g.querySelector('rect');
    const top = +box.getAttribute('y'), bottom = top + +box.getAttribute('height');
    const row = rowNames.filter(t => t.y > top && t.y < bottom).map(t => t.name);
    return {label: g.dataset.label, state: g.dataset.state, row: row,
            text: [...g.querySelectorAll('text')].map(t => t.textContent)};
  });
})()"""

# A method's row in its node's card, by column heading.
METHOD_ROW = """((label, method) => {
  const card = document.querySelector('#cards .card[data-label="' + label + '"]');
  if (!card) return null;
  for (const table of card.querySelectorAll('table')) {
    const heads = [...table.querySelectorAll('th')].map(h => h.textContent);
    for (const row of table.querySelectorAll('tr'))
      if (row.cells[0] && row.cells[0].tagName === 'TD' && row.cells[0].textContent === method)
        return Object.fromEntries(heads.map((h, i) => [h, row.cells[i].textContent]));
  }
  return null;
})"""


class StatusPage(unittest.TestCase):
    def check(self, launch_type):
        chromium = tool("chromium", "chromium", "LP_REQUIRE_CHROMIUM")
        launch = Launch(launch_type, f"--lp_status_linger_secs={LINGER}")
        profile = tempfile.mkdtemp(prefix="lp-launchpad-chromium-")
        browser = None
        try:
            run_dir, secret, page, _ = launch.serving()
            browser = Browser(chromium, profile)
            browser.open(page)
            browser.wait_for("the page asks for the secret",
                             "getComputedStyle(document.getElementById('login')).display === 'block'")
            browser.paste_secret(secret)
            browser.wait_for("the page shows the figures once the secret is pasted",
                             "document.body.dataset.loaded === 'yes' && "
                             f"document.querySelectorAll('#graph g.node').length === {len(LABELS)}")
            # The 401 that told the page to ask for the secret; nothing else.
            browser.problems = [p for p in browser.problems
                                if not ("status of 401" in p and "/lp/v1/status" in p)]

            def drawn():
                nodes = {n["label"]: n for n in browser.evaluate(GRAPH)}
                row = browser.evaluate(f"{METHOD_ROW}('producer/0', 'work')")
                # Each node's figures come in its own time: wait for all three.
                others = [browser.evaluate(f"{METHOD_ROW}('producer/{i}', 'work')") for i in (1, 2)]
                ready = (all(n["state"] == "serving" for n in nodes.values())
                         and row and row["calls"] == str(CALLS)
                         and all(o and o["calls"] == "1" for o in others))
                return ready and (nodes, row)
            nodes, row = wait_until(f"{launch_type}: every node serving, producer/0 with {CALLS} calls, "
                                    "the other two with 1",
                                    drawn, 20)
            self.assertEqual(sorted(nodes), sorted(LABELS))
            for label, node in nodes.items():
                self.assertEqual(node["row"], [GROUPS[label]], f"{label}'s row is not its group's: {node}")
                service = "Doomed" if label == "doomed/0" else label.split("/")[0].capitalize()
                self.assertEqual(node["text"], [label, f"{service} · serving"], node)
            self.assertEqual(row["in flight"], "0", row)
            self.assertEqual(browser.problems, [])

            launch.fail_doomed()
            browser.wait_for("the page marks doomed/0 failed",
                             "document.querySelector('#graph g.node[data-label=\"doomed/0\"]')"
                             ".dataset.state === 'failed'", 30)
            dom = browser.dom()
            self.assertIn("failed: ", dom)
            self.assertIn("doomed was told to fail", dom, "the failure's summary does not say why")
            states = {n["label"]: n["state"] for n in browser.evaluate(GRAPH)}
            self.assertEqual(states["doomed/0"], "failed")
            self.assertEqual(browser.problems, [])
            print(f"{launch_type}: the page drew {len(nodes)} nodes in their groups' rows; "
                  f"doomed/0 failed: {states}", flush=True)
        finally:
            if browser:
                browser.close()
            shutil.rmtree(profile, ignore_errors=True)
            status, left = launch.stop()
            output = launch.output()
            launch.clean()
        # The node's failure is the program's.
        self.assertEqual(status, 1, output)
        self.assertIn(f"the program has ended; its status page stays up for {LINGER} s", output)
        self.assertEqual(left, [], output)

    def test_local_mt(self):
        self.check("local_mt")

    def test_local_mp(self):
        self.check("local_mp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# docs/observability.md's command: the run directory's nodes file to a
# file_sd targets file.
TARGETS_AWK = r'''{sub("http://", "", $2); url[$1] = $2}
     END {printf "["; for (l in url) printf "%s{\"targets\":[\"%s\"],\"labels\":{\"lp_node\":\"%s\"}}", (n++ ? "," : ""), url[l], l; print "]"}'''


class Metrics(unittest.TestCase):
    def check(self, launch_type):
        prometheus = tool("prometheus", "prometheus", "LP_REQUIRE_PROMETHEUS")
        promtool = tool("promtool", "prometheus", "LP_REQUIRE_PROMETHEUS")
        launch = Launch(launch_type)
        scratch = tempfile.mkdtemp(prefix="lp-launchpad-prometheus-")
        server = None
        try:
            run_dir, secret, _, urls = launch.serving()
            for label, url in urls.items():
                status, text = get(url + "/lp/v1/metrics", secret)
                self.assertEqual(status, 200, f"{label}: GET /lp/v1/metrics")
                checked = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                         capture_output=True, timeout=30)
                self.assertEqual(checked.returncode, 0, f"promtool rejects {label}'s metrics:\n"
                                 f"{checked.stdout}{checked.stderr}\n{text}")
            self.assertEqual(get(urls["producer/0"] + "/lp/v1/metrics")[0], 401)

            targets = os.path.join(scratch, "targets.json")
            with open(targets, "w") as out:
                subprocess.run(["awk", TARGETS_AWK, os.path.join(run_dir, "nodes")], stdout=out,
                               check=True, timeout=30)
            with open(targets) as f:
                listed = {t["labels"]["lp_node"]: t["targets"] for t in json.load(f)}
            self.assertEqual(sorted(listed), sorted(LABELS))
            config = os.path.join(scratch, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: launchpad\n    metrics_path: /lp/v1/metrics\n"
                        f"    authorization:\n      credentials_file: {run_dir}/secret\n"
                        f"    file_sd_configs:\n      - files: [{targets}]\n")
            port = free_port()
            with open(os.path.join(scratch, "prometheus.log"), "wb") as log:
                server = subprocess.Popen([prometheus, f"--config.file={config}",
                                           f"--storage.tsdb.path={scratch}/data",
                                           f"--web.listen-address=127.0.0.1:{port}"],
                                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

            def query(expression):
                if server.poll() is not None:
                    with open(os.path.join(scratch, "prometheus.log")) as f:
                        raise AssertionError("prometheus exited:\n" + f.read()[-3000:])
                try:
                    status, body = get(f"http://127.0.0.1:{port}/api/v1/query?" +
                                       urllib.parse.urlencode({"query": expression}))
                except OSError:
                    return None
                return json.loads(body)["data"]["result"] if status == 200 else None

            def value(expression):
                found = query(expression)
                return float(found[0]["value"][1]) if found and len(found) == 1 else None

            def scraped():
                up = query('up{job="launchpad"}')
                if not up or len(up) != len(LABELS) or any(r["value"][1] != "1" for r in up):
                    return None
                return value('lp_calls_total{node="producer/0",method="work",code="200"}') == CALLS
            wait_until(f"prometheus sees every node up and producer/0's lp_calls_total == {CALLS}",
                       scraped, 60)
            nodes = sorted(r["metric"]["lp_node"] for r in query('up{job="launchpad"}'))
            self.assertEqual(nodes, sorted(LABELS))
            for label in ("producer/1", "producer/2"):
                self.assertEqual(value(f'lp_calls_total{{node="{label}",method="work",code="200"}}'), 1)
            self.assertEqual(value('lp_call_duration_seconds_count{node="producer/0",method="work"}'),
                             CALLS)
            # 23 calls' bodies, none empty.
            self.assertGreater(value('lp_call_request_bytes_total{node="producer/0",method="work"}'),
                               CALLS)
            self.assertEqual(value('sum(lp_calls_total{node="producer/0",code!="200"})'), None)
            self.assertEqual(value('works_total{node="consumer/0"}'), CALLS)
            for label in LABELS:
                self.assertGreater(value(f'lp_process_resident_memory_bytes{{node="{label}"}}'), 0)
                self.assertEqual(value(f'lp_restarts_total{{node="{label}"}}'), 0)
            print(f"{launch_type}: prometheus scraped {len(nodes)} nodes; producer/0's work: "
                  f"{CALLS} calls, works_total {CALLS}", flush=True)
        finally:
            if server:
                server.terminate()
                try:
                    server.wait(15)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(5)
            shutil.rmtree(scratch, ignore_errors=True)
            status, left = launch.stop()
            output = launch.output()
            launch.clean()
        self.assertEqual(status, 0, output)
        self.assertEqual(left, [], output)

    def test_local_mt(self):
        self.check("local_mt")

    def test_local_mp(self):
        self.check("local_mp")


class StatusCommand(unittest.TestCase):
    def test_local_mp(self):
        launch = Launch("local_mp", f"--lp_status_linger_secs={LINGER}")
        try:
            run_dir, secret, _, _ = launch.serving()

            def listed():
                code, out, _ = status_command(run_dir, "--lp_json")
                if code != 0:
                    return None
                status = json.loads(out)
                nodes = {n["label"]: n for n in status["nodes"]}
                calls = [m["calls"] for m in nodes.get("producer/0", {}).get("methods", [])
                         if m["name"] == "work"]
                ready = (sorted(nodes) == sorted(LABELS) and calls == [CALLS]
                         and all(n["state"] == "serving" for n in nodes.values()))
                return ready and status
            status = wait_until("--lp_status --lp_json lists every node serving", listed, 30)
            self.assertEqual((status["program"], status["policy"]), ("observed", "local_mp"))
            self.assertEqual(status["groups"], ["producer", "consumer", "doomed"])
            self.assertEqual({n["label"]: n["group"] for n in status["nodes"]}, GROUPS)
            self.assertEqual({n["label"]: n["service"] for n in status["nodes"]},
                             {"producer/0": "Producer", "producer/1": "Producer", "producer/2": "Producer",
                              "consumer/0": "Consumer", "doomed/0": "Doomed"})
            self.assertEqual(status["nodes"][0]["edges"], [])
            consumer = next(n for n in status["nodes"] if n["label"] == "consumer/0")
            self.assertEqual(sorted(consumer["edges"]), ["producer/0", "producer/1", "producer/2"])

            code, table, err = status_command(run_dir)
            self.assertEqual(code, 0, err)
            rows = {line.split()[0]: line.split() for line in table.splitlines()[2:] if line.strip()
                    and not line.startswith(" ")}
            self.assertEqual(table.splitlines()[0], "observed (local_mp)")
            self.assertEqual(sorted(rows), sorted(LABELS), table)
            for label in LABELS:
                self.assertEqual(rows[label][1], "serving", table)
            self.assertNotIn(secret, table)

            launch.fail_doomed()

            def failed():
                code, out, _ = status_command(run_dir, "--lp_json")
                nodes = {n["label"]: n for n in json.loads(out)["nodes"]} if code == 0 else {}
                return nodes.get("doomed/0", {}).get("state") == "failed" and nodes
            nodes = wait_until("--lp_status --lp_json shows doomed/0 failed", failed, 30)
            # Why, in its last lines: a local_mp node's host says only how
            # its process ended.
            self.assertIn("RuntimeError: doomed was told to fail", nodes["doomed/0"]["last_lines"])
            self.assertEqual(nodes["doomed/0"]["failure"], "exited with status 1")
            # The failure ends the program; its status stays up for the linger.
            launch.wait_for(f"the program has ended; its status page stays up for {LINGER} s", LEFT_BOUND)
            code, table, err = status_command(run_dir)
            self.assertEqual(code, 0, err)
            rows = {line.split()[0]: line.split()[1] for line in table.splitlines()[2:]
                    if line.strip() and not line.startswith(" ")}
            self.assertEqual(rows, {"producer/0": "stopped", "producer/1": "stopped",
                                    "producer/2": "stopped", "consumer/0": "stopped",
                                    "doomed/0": "failed"}, table)
            self.assertIn("\n  failed: exited with status 1\n", table)
            print(f"local_mp, after doomed/0 raised:\n{table}", flush=True)

            # Ctrl+C leaves the linger: the launch is gone, and so is its status.
            status, left = launch.stop()
            code, out, err = status_command(run_dir)
            self.assertEqual((code, out), (1, ""))
            self.assertIn(f"{run_dir} names no status page: is it a run directory of a running", err)
            self.assertFalse(os.path.exists(run_dir), f"{run_dir} is left")
        finally:
            status, left = launch.stop()
            output = launch.output()
            launch.clean()
        self.assertEqual(status, 1, output)
        self.assertEqual(left, [], output)

    def test_no_launch(self):
        with tempfile.TemporaryDirectory() as nowhere:
            code, out, err = status_command(nowhere)
        self.assertEqual((code, out), (1, ""))
        self.assertIn("names no status page", err)


# A node's row of the page's table of nodes, by column heading.
TABLE_ROW = """((label) => {
  const heads = [...document.querySelectorAll('#table')[0].closest('table').querySelectorAll('thead th')]
    .map(h => h.textContent);
  const row = document.querySelector('#table tr[data-label="' + label + '"]');
  return row && Object.fromEntries(heads.map((h, i) => [h, row.cells[i].textContent]));
})"""


class Restarts(unittest.TestCase):
    def test_local_mp(self):
        """A group's restart, seen where a C++ program's is."""
        labels = LABELS + ["flaky/0"]
        launch = Launch("local_mp", "flaky", labels=labels)
        profile = tempfile.mkdtemp(prefix="lp-launchpad-chromium-")
        browser = None
        try:
            run_dir, secret, page, _ = launch.serving()
            wait_until("flaky/0's second run()", lambda: os.path.exists(os.path.join(launch.marks, "restarted")),
                       STARTUP)
            self.assertIn("[lp] node flaky/0 exited with status 1; restarting it in 100 ms (restart 1 of 1)",
                          launch.output())

            def restarted():
                code, out, _ = status_command(run_dir, "--lp_json")
                nodes = {n["label"]: n for n in json.loads(out)["nodes"]} if code == 0 else {}
                flaky = nodes.get("flaky/0", {})
                return flaky.get("state") == "serving" and flaky.get("restarts") == 1 and nodes
            nodes = wait_until("--lp_status --lp_json shows flaky/0 serving after 1 restart", restarted, 30)
            self.assertEqual(nodes["flaky/0"]["group"], "flaky")
            self.assertEqual({label: n["restarts"] for label, n in nodes.items() if label != "flaky/0"},
                             {label: 0 for label in LABELS})

            # The table and --lp_json name the same process: until the
            # node's first scrape both may show its host's pid, then its
            # own, so the two reads are repeated until they agree.
            def agreeing():
                code, table, err = status_command(run_dir)
                self.assertEqual(code, 0, err)
                rows = {line.split()[0]: line.split() for line in table.splitlines()[2:]
                        if line.strip() and not line.startswith(" ")}
                code, out, err = status_command(run_dir, "--lp_json")
                self.assertEqual(code, 0, err)
                now = {n["label"]: n for n in json.loads(out)["nodes"]}
                return rows["flaky/0"][2] == str(now["flaky/0"]["pid"]) and (table, rows)
            table, rows = wait_until("the table and --lp_json name one pid for flaky/0", agreeing, 30)
            self.assertEqual(rows["flaky/0"][1:4:2], ["serving", "1"], table)  # STATE, RESTARTS

            # The new process's metrics (its address: the nodes file's last line for it).
            with open(os.path.join(run_dir, "nodes")) as f:
                url = [line.split()[1] for line in f if line.split()[:1] == ["flaky/0"]][-1]
            status, text = get(url + "/lp/v1/metrics", secret)
            self.assertEqual(status, 200)
            self.assertIn('\nlp_restarts_total{node="flaky/0"} 1\n', text)

            chromium = shutil.which("chromium")
            if chromium or os.environ.get("LP_REQUIRE_CHROMIUM"):
                browser = Browser(tool("chromium", "chromium", "LP_REQUIRE_CHROMIUM"), profile)
                browser.open(page)
                browser.wait_for("the page asks for the secret",
                                 "getComputedStyle(document.getElementById('login')).display === 'block'")
                browser.paste_secret(secret)
                def shown():
                    row = (browser.evaluate("document.body.dataset.loaded === 'yes'")
                           and browser.evaluate(f"{TABLE_ROW}('flaky/0')"))
                    return row and row["restarts"] == "1" and row
                row = wait_until("the page's row of flaky/0 with its restart", shown, 20)
                self.assertEqual((row["state"], row["restarts"]), ("serving", "1"), row)
                self.assertEqual(browser.evaluate(f"{TABLE_ROW}('producer/0')")["restarts"], "0")
            print(f"local_mp, flaky/0 restarted once:\n{table}", flush=True)
        finally:
            if browser:
                browser.close()
            shutil.rmtree(profile, ignore_errors=True)
            status, left = launch.stop()
            output = launch.output()
            launch.clean()
        self.assertEqual(status, 0, output)
        self.assertEqual(left, [], output)


if __name__ == "__main__":
    try:
        import cloudpickle  # noqa: F401  (launch() writes definitions with it)
    except ImportError:
        if os.environ.get("LP_REQUIRE_CLOUDPICKLE"):
            raise
        print("skipped: launchpad.launch() needs cloudpickle (apt-get install python3-cloudpickle)")
        sys.exit(77)
    unittest.main(verbosity=2)
