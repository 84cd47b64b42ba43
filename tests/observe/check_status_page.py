"""The launcher's status page in a real browser: headless chromium, driven
over the DevTools protocol (browser.py).

Launches tests/observe/program under local_mp and checks that its page
needs the secret for its figures, takes it the documented way (pasted into
its box; a #secret=... in the address is not taken) with the secret on no
process's command line, loads with no script error, draws every node of the
graph, plots the user series, shows a log line with HTML in it as text (no
markup, no script), and marks a node the test kills as failed within 2 s.
At 1400 and 1000 px wide it takes a screenshot of the whole page (into
LP_STATUS_SCREENSHOTS, paths printed) and checks that nothing in a
node's card is clipped (the in-flight column; a log line longer than the
card wraps), that a gauge shows four significant digits, not seventeen, and
that a method called once shows that call's time as its p50 and p99. With
LP_STATUS_SCREENSHOT=<png>, saves the screenshot of docs/images/status-page.png
there. Exits 77 when chromium is missing.
"""

import html
import json
import os
import re
import shutil
import signal
import tempfile
import time

from browser import Browser
from launched import Launched, call, get, need_tool, wait_until

LABELS = ["counter", "recorder", "workers/0", "workers/1"]

# Per card, what does not fit: a cell whose text is wider than the cell, or
# that reaches past its card, and a log that hides text sideways.
CLIPPED = """(() => {
  const out = [];
  for (const card of document.querySelectorAll('#cards .card')) {
    const edge = card.getBoundingClientRect().right;
    for (const cell of card.querySelectorAll('th, td, pre')) {
      if (cell.scrollWidth > cell.clientWidth + 1 || cell.getBoundingClientRect().right > edge + 1)
        out.push(card.dataset.label + ': ' + JSON.stringify(cell.textContent.slice(0, 40)) +
                 ' (' + cell.scrollWidth + ' px in ' + cell.clientWidth + ', right ' +
                 Math.round(cell.getBoundingClientRect().right) + ' past ' + Math.round(edge) + ')');
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth)
    out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' px');
  return out;
})()"""

# The cells of a method's row in its node's card, by column heading.
METHOD_ROW = """((label, method) => {
  const card = document.querySelector('#cards .card[data-label="' + label + '"]');
  for (const table of card.querySelectorAll('table')) {
    const heads = [...table.querySelectorAll('th')].map(h => h.textContent);
    for (const row of table.querySelectorAll('tr'))
      if (row.cells[0] && row.cells[0].tagName === 'TD' && row.cells[0].textContent === method)
        return Object.fromEntries(heads.map((h, i) => [h, row.cells[i].textContent]));
  }
  return null;
})"""

# A figure of a node's card: the text shown beside its name.
FIGURE = """((label, name) => {
  const card = document.querySelector('#cards .card[data-label="' + label + '"]');
  for (const row of card.querySelectorAll('tr'))
    if (row.cells.length === 2 && row.cells[0].textContent === name) return row.cells[1].textContent;
  return null;
})"""


def node_element(dom, label):
    match = re.search(rf'<g class="node [a-z]+" data-label="{re.escape(label)}" data-state="([a-z]+)"', dom)
    assert match, f"the graph has no node {label}"
    return match.group(1)


def logged_in(browser, url, secret):
    """Opens the page as docs/observability.md says: the URL, then the secret pasted."""
    browser.open(url)
    browser.wait_for("the page asks for the secret",
                     "getComputedStyle(document.getElementById('login')).display === 'block'")
    text = browser.evaluate("document.getElementById('login').textContent")
    assert "#secret" not in text, f"the page tells users to put the secret in its address: {text}"
    browser.paste_secret(secret)
    browser.wait_for("the page shows the figures once the secret is pasted",
                     "document.body.dataset.loaded === 'yes' && document.querySelectorAll('#cards .card').length")
    # Asked without the secret, the status answered 401, which chromium
    # logs: that is how the page knew to ask.
    browser.problems = [p for p in browser.problems
                        if not ("status of 401" in p and "/lp/v1/status" in p)]


def checked_dom(browser):
    dom = browser.dom()
    assert not browser.problems, "the page logged problems:\n" + "\n".join(browser.problems)
    assert 'id="errors" style="display: block' not in dom, f"the page shows script errors:\n{dom}"
    assert "data-pwned" not in dom, "a log line's HTML ran as script"
    return dom


def secret_on_a_command_line(secret):
    """The processes whose command line holds the secret: what ps would show."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if secret.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def check_at(browser, width, shots, called_once):
    browser.resize(width)
    # A refresh at the new width, then what it drew.
    browser.evaluate("document.body.dataset.loaded = ''")
    browser.wait_for(f"a refresh at {width} px", "document.body.dataset.loaded === 'yes'")
    path = os.path.join(shots, f"status-{width}.png")
    size = browser.screenshot(path)
    print(f"{width} px: screenshot {path} ({size[0]}x{size[1]})", flush=True)
    assert size[0] == width and size[1] > 600, f"{path}: {size}"
    clipped = browser.evaluate(CLIPPED)
    assert not clipped, f"at {width} px, clipped:\n" + "\n".join(clipped)
    row = browser.evaluate(f"{METHOD_ROW}('counter', 'add')")
    assert row and row["in flight"] == "0", f"counter's add row: {row}"
    # One call: its own time, not two edges of the bucket it fell in.
    assert row["calls"] == "1" and row["p50"] == row["p99"] == called_once, (row, called_once)
    norm = browser.evaluate(f"{FIGURE}('recorder', 'weights_norm')")
    assert norm == "7.27", f"weights_norm shows as {norm!r}"
    log = browser.evaluate("document.querySelector('#cards .card[data-label=\"recorder\"] pre.log').textContent")
    assert "the end of the long line" in log, log
    checked_dom(browser)


def duration(seconds):
    """As the page shows a latency."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main():
    binary = need_tool("chromium", "chromium")
    program = Launched("--lp_status_linger_secs=60")
    profile = tempfile.mkdtemp(prefix="lp-chromium-")
    # Kept where LP_STATUS_SCREENSHOTS says (meson test: the build
    # directory's tests/observe/screenshots), else gone with the profile.
    shots = os.environ.get("LP_STATUS_SCREENSHOTS") or profile
    os.makedirs(shots, exist_ok=True)
    browser = None
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
        assert call(program.url("counter"), "add", [1], secret) == 1

        def serving_with_series():
            status, body = get(page + "lp/v1/status", secret)
            nodes = {n["label"]: n for n in json.loads(body)["nodes"]} if status == 200 else {}
            ready = (len(nodes) == len(LABELS) and all(n["state"] == "serving" for n in nodes.values())
                     and len(nodes["recorder"].get("series", {}).get("wave", [])) >= 10
                     and len(nodes["recorder"].get("last_lines", [])) >= 2
                     and nodes["counter"].get("methods"))
            return ready and nodes
        nodes = wait_until("every node serving, the series recorded", serving_with_series, 60)
        add = next(m for m in nodes["counter"]["methods"] if m["name"] == "add")
        assert add["p50"] == add["p99"], f"one call, two latencies: {add}"

        browser = Browser(binary, profile)
        # A secret in the address is not taken: the documented way is the box.
        browser.open(page + "#secret=" + secret)
        browser.wait_for("the page, opened as URL#secret=..., asks for the secret all the same",
                         "getComputedStyle(document.getElementById('login')).display === 'block'")
        assert browser.evaluate("document.body.dataset.loaded") != "yes", "the page took #secret=..."
        logged_in(browser, page, secret)
        dom = checked_dom(browser)
        for label in LABELS:
            assert node_element(dom, label) == "serving", label
        wave = re.search(r'<svg class="plot"[^>]*data-points="(\d+)"[^>]*data-series="wave"', dom)
        assert wave and int(wave.group(1)) >= 10, "the user series 'wave' is not plotted"
        assert "<polyline" in dom
        assert html.escape("<img src=x onerror=", quote=False) in dom, "the log line is not shown as text"
        assert "<img" not in dom, "a log line's HTML became an element"
        assert 'data-since="' in dom, "the cards do not say whose figures they show"
        for width in (1400, 1000):
            check_at(browser, width, shots, duration(add["p50"]))
        if os.environ.get("LP_STATUS_SCREENSHOT"):
            browser.resize(1280, 1100)
            browser.screenshot(os.environ["LP_STATUS_SCREENSHOT"])
        assert not secret_on_a_command_line(secret), "the secret is on a command line, for ps to show"

        victim = nodes["workers/1"]["pid"]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()

        def failed():
            status, body = get(page + "lp/v1/status", secret)
            return status == 200 and any(n["label"] == "workers/1" and n["state"] == "failed"
                                         for n in json.loads(body)["nodes"])
        wait_until("the killed node marked failed", failed, 2)
        print(f"workers/1 (pid {victim}) marked failed {time.monotonic() - killed:.2f} s after the kill")
        browser.wait_for("the page marks workers/1 failed",
                         "document.querySelector('#graph g.node[data-label=\"workers/1\"]').dataset.state"
                         " === 'failed'", 5)
        dom = checked_dom(browser)
        assert "failed: " in dom, "no failure summary"
    finally:
        if browser:
            browser.close()
        program.stop()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
