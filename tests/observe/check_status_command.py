"""program --lp_status=RUN_DIR [--lp_json] against a running launch, under
local_mt and local_mp: every node listed, serving, with the calls the test
made, the figures the nodes record and the last lines they wrote (under
local_mt, through std::cout and std::cerr, from a run() and a handler); and
what it says of a directory that is no run directory.
"""

import json
import subprocess
import tempfile

from launched import Launched, call, program, wait_until

LABELS = ["counter", "recorder", "workers/0", "workers/1"]


def status_of(run_dir, *flags):
    done = subprocess.run([program(), f"--lp_status={run_dir}", *flags], capture_output=True,
                          text=True, timeout=30)
    return done.returncode, done.stdout, done.stderr


def check(policy):
    launched = Launched(policy=policy)
    try:
        run_dir, secret = launched.run_dir(), launched.secret()
        launched.status_url()
        for _ in range(5):
            call(launched.url("counter"), "add", [2], secret)

        def listed():
            code, out, _ = status_of(run_dir, "--lp_json")
            if code != 0:
                return None
            nodes = {n["label"]: n for n in json.loads(out)["nodes"]}
            calls = [m["calls"] for m in nodes.get("counter", {}).get("methods", []) if m["name"] == "add"]
            ready = (sorted(nodes) == sorted(LABELS) and all(n["state"] == "serving" for n in nodes.values())
                     and calls == [5] and "ticks" in nodes["recorder"].get("counters", {})
                     and nodes["counter"]["last_lines"].count("add(2)") == 5
                     and any("<img src=x" in line for line in nodes["recorder"]["last_lines"]))
            return ready and nodes
        nodes = wait_until(f"{policy}: --lp_status --lp_json lists every node with its calls", listed, 30)
        assert json.loads(status_of(run_dir, "--lp_json")[1])["policy"] == policy
        code, table, _ = status_of(run_dir)
        assert code == 0, table
        for label in LABELS:
            assert any(line.split()[:2] == [label, "serving"] for line in table.splitlines()), table
        assert "ticks=" in table and "wave=" in table, table
        assert secret not in table
        # Each line once, behind its node's prefix, as the terminal shows it.
        assert launched.output().count("[counter] add(2)\n") == 5, launched.output()
        print(f"{policy}: --lp_status lists {len(nodes)} nodes\n{table}")
    finally:
        launched.stop()


def main():
    for policy in ("local_mt", "local_mp"):
        check(policy)
    with tempfile.TemporaryDirectory() as nowhere:
        code, _, err = status_of(nowhere)
        assert code == 1 and "names no status page" in err, err


if __name__ == "__main__":
    main()
