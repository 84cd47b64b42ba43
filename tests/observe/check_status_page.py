"""The launcher's status page in a real browser: headless chromium.

Launches tests/observe/program under local_mp and checks that its page
loads with no script error, draws every node of the graph, plots the user
series, shows a log line with HTML in it as text (no markup, no script),
needs the secret for its figures (never printed), and marks a node the test
kills as failed within 2 s. With LP_STATUS_SCREENSHOT=<png>, saves a
screenshot there (docs/images/status-page.png comes from this). Exits 77
when chromium is missing.
"""

import html
import json
import os
import re
import signal
import subprocess
import tempfile
import time

from launched import Launched, get, need_tool, wait_until

LABELS = ["counter", "recorder", "workers/0", "workers/1"]


def chromium(binary, profile, *args):
    """Runs headless chromium (as root it needs --no-sandbox); returns (stdout, stderr)."""
    done = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                           *args], capture_output=True, text=True, timeout=120)
    return done.stdout, done.stderr


def dom_of(binary, profile, url):
    dom, log = chromium(binary, profile, "--virtual-time-budget=4000", "--dump-dom", url)
    assert 'data-loaded="yes"' in dom, f"the page did not load its status:\n{dom[:3000]}\n{log[-3000:]}"
    console = [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, "the page logged to its console:\n" + "\n".join(console)
    assert 'id="errors" style="display: block' not in dom, f"the page shows script errors:\n{dom}"
    assert "data-pwned" not in dom, "a log line's HTML ran as script"
    return dom


def node_element(dom, label):
    match = re.search(rf'<g class="node [a-z]+" data-label="{re.escape(label)}" data-state="([a-z]+)"', dom)
    assert match, f"the graph has no node {label}"
    return match.group(1)


def main():
    binary = need_tool("chromium", "chromium")
    program = Launched("--lp_status_linger_secs=60")
    profile = tempfile.mkdtemp(prefix="lp-chromium-")
    try:
        page = program.status_url()
        secret = program.secret()
        assert page.startswith("http://127.0.0.1:"), page
        assert secret not in program.output(), "the secret was printed"
        status, text = get(page)
        assert status == 200 and "<svg" in text and secret not in text
        status, _ = get(page + "lp/v1/status")
        assert status == 401, f"the status without the secret answered {status}"
        assert get(page + "lp/v1/health")[0] == 200

        def serving_with_series():
            status, body = get(page + "lp/v1/status", secret)
            nodes = {n["label"]: n for n in json.loads(body)["nodes"]} if status == 200 else {}
            ready = (len(nodes) == len(LABELS) and all(n["state"] == "serving" for n in nodes.values())
                     and len(nodes["recorder"].get("series", {}).get("wave", [])) >= 10
                     and len(nodes["recorder"].get("last_lines", [])) >= 1)
            return ready and nodes
        nodes = wait_until("every node serving, the series recorded", serving_with_series, 60)

        url = page + "#secret=" + secret  # a fragment: no server sees it
        dom = dom_of(binary, profile, url)
        for label in LABELS:
            assert node_element(dom, label) == "serving", label
        wave = re.search(r'<svg class="plot"[^>]*data-points="(\d+)"[^>]*data-series="wave"', dom)
        assert wave and int(wave.group(1)) >= 10, "the user series 'wave' is not plotted"
        assert "<polyline" in dom
        assert html.escape("<img src=x onerror=", quote=False) in dom, "the log line is not shown as text"
        assert "<img" not in dom, "a log line's HTML became an element"
        if os.environ.get("LP_STATUS_SCREENSHOT"):
            chromium(binary, profile, "--virtual-time-budget=4000", "--window-size=1280,1100",
                     f"--screenshot={os.environ['LP_STATUS_SCREENSHOT']}", url)

        victim = nodes["workers/1"]["pid"]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()

        def failed():
            status, body = get(page + "lp/v1/status", secret)
            return status == 200 and any(n["label"] == "workers/1" and n["state"] == "failed"
                                         for n in json.loads(body)["nodes"])
        wait_until("the killed node marked failed", failed, 2)
        print(f"workers/1 (pid {victim}) marked failed {time.monotonic() - killed:.2f} s after the kill")
        dom = dom_of(binary, profile, url)
        assert node_element(dom, "workers/1") == "failed"
        assert "failed: killed by SIGKILL" in dom or "failed: " in dom, "no failure summary"
    finally:
        program.stop()
        subprocess.run(["rm", "-rf", profile])


if __name__ == "__main__":
    main()
