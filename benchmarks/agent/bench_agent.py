"""Benchmarks of examples/agent (docs/agent.md): how fast it steps, and how
soon it learns, on this machine.

    nice meson compile -C build-release agent
    /usr/bin/python3 benchmarks/agent/bench_agent.py build-release/examples/agent/agent --speed
    /usr/bin/python3 benchmarks/agent/bench_agent.py build-release/examples/agent/agent --learn

--speed (the default) prints, side by side from one run, the environment
steps per second of
  (a) benchmarks/agent/baseline.py: the same IMPALA learner, network and
      settings in one Python process, with a Python CartPole;
  (b) the agent under local_mp with 1, 2 and 4 actors (C++ inference);
  (c) the agent with 2 actors and --inference=torch (PyTorch inference);
each trained for --seconds (20) after its first update, --runs (5) rounds,
the order rotating each round, and where the actors' time went, from the
nodes' own metrics (each actor's actor_*_seconds counters; the inference
node's and the replay node's lp_call_duration_seconds), scraped while the
agent runs.

--same-host runs (b) alone, each configuration twice a round: on one host's
unix sockets and shared memory (the default) and with --lp_same_host=off
(loopback TCP), the order rotating, and prints for each the actors'
inference wait per step less the inference node's own time per call, the
learner's CPU per step outside its update, and the fraction of the
learner-bound ceiling it reached (env steps/s over 1 / the update's time
per step).

--learn runs the agent (2 actors) with seeds 0..--seeds-1 until the last
100 episodes average 475, each at most --max_seconds (600), and prints the
environment steps and the time each took (--baseline as well: the baseline
too).

Every figure is a median (and min-max) over the runs. Other programs on the
machine slow both sides alike only if they run throughout: run it on a quiet
machine, or read the ratios of one round.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "agent")
PYTHON = "/usr/bin/python3"

LEARNER_LINE = re.compile(
    r"learner: (?P<why>.*?) after (?P<steps>\d+) env steps, (?P<episodes>\d+) episodes, "
    r"(?P<updates>\d+) updates in (?P<seconds>[\d.]+) s of training \((?P<rate>\d+) env steps/s\)")
LEARNER_CPU = re.compile(r"learner: of its time (?P<split>.*); (?P<update>[\d.]+) us of update per "
                         r"step; process CPU (?P<cpu>[\d.]+) us per step(?: \(update (?P<update_cpu>[\d.]+)\))?")
SECRET_LINE = re.compile(r"\[lp\] the launch's secret is in (?P<dir>\S+)/secret")


def scrape(run_dir):
    """Every node's Prometheus text, by label: {label: {sample: value}}."""
    with open(os.path.join(run_dir, "secret")) as f:
        secret = f.read().strip()
    urls = {}
    with open(os.path.join(run_dir, "nodes")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                urls[parts[0]] = parts[1]
    out = {}
    for label, url in urls.items():
        request = urllib.request.Request(url + "/lp/v1/metrics",
                                         headers={"Authorization": "Bearer " + secret})
        try:
            text = urllib.request.urlopen(request, timeout=2).read().decode()
        except OSError:
            continue
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    samples[name] = float(value)
                except ValueError:
                    pass
        out[label] = samples
    return out


def where_time_goes(metrics, envs):
    """From the last scrape: per actor step (one call for `envs` cart-poles),
    the actors' seconds stepping, waiting on inference and inserting, and
    the inference and replay nodes' own time per call."""
    if not metrics:
        return None
    total = {"stepping": 0.0, "inference": 0.0, "inserting": 0.0, "steps": 0.0}
    for label, samples in metrics.items():
        if not label.startswith("actors/"):
            continue
        for key in ("stepping", "inference", "inserting"):
            total[key] += sum(v for k, v in samples.items()
                              if k.startswith(f"actor_{key}_seconds_total"))
        total["steps"] += sum(v for k, v in samples.items() if k.startswith("actor_env_steps_total"))
    calls = total["steps"] / envs
    if calls == 0:
        return None

    def server(label, method):
        s = metrics.get(label, {})
        n = sum(v for k, v in s.items() if k.startswith("lp_call_duration_seconds_count")
                and f'method="{method}"' in k)
        t = sum(v for k, v in s.items() if k.startswith("lp_call_duration_seconds_sum")
                and f'method="{method}"' in k)
        return (1e6 * t / n) if n else None

    return {"stepping_us": 1e6 * total["stepping"] / calls,
            "inference_us": 1e6 * total["inference"] / calls,
            "inserting_us": 1e6 * total["inserting"] / calls,
            "inference_node_us": server("inference", "act"),
            "replay_insert_us": server("replay", "insert")}


def run_agent(binary, actors, seconds, *, target=0.0, seed=0, inference="cpp", envs=16,
              extra=(), timeout=None):
    """Runs the agent; returns the learner's figures and the last scrape."""
    checkpoints = tempfile.mkdtemp(prefix="agent-bench-")
    env = blas_env()
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), EXAMPLE])
    command = ["nice", binary, "--lp_launch=local_mp", f"--lp_python={PYTHON}",
               f"--lp_checkpoint_dir={checkpoints}", "--lp_status_port=off",
               f"--actors={actors}", f"--envs={envs}", f"--max_seconds={seconds}",
               f"--target={target}", f"--seed={seed}", f"--inference={inference}", *extra]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env, cwd=EXAMPLE)
    lines, last, first = [], {}, {}
    run_dir = []
    done = threading.Event()

    def poll():
        while not done.wait(1.0):
            if run_dir:
                try:
                    m = scrape(run_dir[0])
                    if any(label.startswith("actors/") for label in m):
                        last.clear()
                        last.update(m)
                        if not first and learner_steps(m) > 0:
                            first.update(m)
                except OSError:
                    pass

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            m = SECRET_LINE.search(line)
            if m and not run_dir:
                run_dir.append(m.group("dir"))
        process.wait(timeout=timeout)
    finally:
        done.set()
        if process.poll() is None:
            process.kill()
        shutil.rmtree(checkpoints, ignore_errors=True)
    wall = time.monotonic() - started
    result = {"status": process.returncode, "wall": wall, "lines": lines}
    for line in lines:
        m = LEARNER_LINE.search(line)
        if m:
            result.update(why=m.group("why"), steps=int(m.group("steps")),
                          seconds=float(m.group("seconds")), rate=float(m.group("rate")),
                          episodes=int(m.group("episodes")), updates=int(m.group("updates")))
        m = LEARNER_CPU.search(line)
        if m:
            result.update(learner_split=m.group("split"), learner_update_us=float(m.group("update")),
                          learner_cpu_us=float(m.group("cpu")))
            if m.group("update_cpu"):
                result["learner_update_cpu_us"] = float(m.group("update_cpu"))
    result["time"] = where_time_goes(last, envs)
    steps = learner_steps(last) - learner_steps(first)
    if first and steps > 0:
        result["cpu_us_per_step"] = 1e6 * (cpu_seconds(last) - cpu_seconds(first)) / steps
    return result


def learner_steps(metrics):
    return max((v for label, s in metrics.items() if label.startswith("learner")
                for k, v in s.items() if k.startswith("env_steps{")), default=0.0)


def cpu_seconds(metrics):
    """The CPU time of every node's process (each reports its own; the
    learner's, its Python process's)."""
    return sum(v for s in metrics.values() for k, v in s.items()
               if k.startswith("lp_process_cpu_seconds_total"))


BLAS_DIR = None  # --blas_dir


def blas_env():
    """The environment of both sides: with --blas_dir, its libblas.so.3 (one
    thread) in place of the system's."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if BLAS_DIR:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (BLAS_DIR, env.get("LD_LIBRARY_PATH")) if p)
        env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run_baseline(seconds, *, target=0.0, seed=0, envs=32):
    out = subprocess.run(["nice", PYTHON, os.path.join(HERE, "baseline.py"), "--json",
                          f"--max_seconds={seconds}", f"--target={target}", f"--seed={seed}",
                          f"--envs={envs}"], capture_output=True, text=True, check=True,
                         env=blas_env())
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["rate"] = result["steps_per_second"]
    return result


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, mid, hi = min(values), statistics.median(values), max(values)
    if max(abs(lo), abs(hi)) >= 1000:
        return f"{mid / 1000:.1f}k ({lo / 1000:.1f}k-{hi / 1000:.1f}k)"
    return f"{mid:.2f} ({lo:.2f}-{hi:.2f})"


def speed(args):
    configs = [("(a) baseline.py, 1 process", None, None)]
    configs += [(f"(b) agent, {n} actor{'s' if n > 1 else ''}", n, "cpp") for n in (1, 2, 4)]
    if not args.no_torch:
        configs.append(("(c) agent, 2 actors, --inference=torch", 2, "torch"))
    results = {name: [] for name, _, _ in configs}
    for r in range(args.runs):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for name, actors, inference in order:
            if actors is None:
                res = run_baseline(args.seconds)
            else:
                res = run_agent(args.binary, actors, args.seconds, inference=inference)
                if "rate" not in res:
                    print("\n".join(res["lines"][-30:]), file=sys.stderr)
                    sys.exit(f"bench_agent: {name} did not report (exit {res['status']})")
            results[name].append(res)
            t = res.get("time") or {}
            print(f"round {r + 1}: {name}: {res['rate']:.0f} env steps/s"
                  + (f", {res['cpu_us_per_step']:.1f} CPU us/step" if res.get("cpu_us_per_step") else "")
                  + (f"; learner CPU {res['learner_cpu_us']:.1f} us/step (update "
                     f"{res['learner_update_us']:.1f}): {res['learner_split']}"
                     if "learner_cpu_us" in res else "")
                  + (f"; per actor step: stepping {t['stepping_us']:.0f} us, inference "
                     f"{t['inference_us']:.0f} us (node: {t['inference_node_us'] or 0:.0f}), "
                     f"inserting {t['inserting_us']:.0f} us" if t else ""), flush=True)
    base = [res["rate"] for res in results[configs[0][0]]]
    print(f"\n{'BLAS from ' + BLAS_DIR if BLAS_DIR else 'the system BLAS'}: "
          f"env steps/s, median (min-max) of {args.runs} runs of {args.seconds:g} s of training;"
          " ratio = the agent's over the baseline's of the same round")
    print("| configuration | env steps/s | ratio to (a) | CPU µs per env step, all processes | "
          "actor step: stepping / inference (inference node) / inserting, µs | learner CPU µs/step (update) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, actors, _ in configs:
        rs = results[name]
        rates = [res["rate"] for res in rs]
        ratio = "1" if actors is None else spread([a / b for a, b in zip(rates, base)])
        times = [res.get("time") for res in rs if res.get("time")]

        def med(key):
            vals = [t[key] for t in times if t.get(key) is not None]
            return f"{statistics.median(vals):.0f}" if vals else "-"

        actor = (f"{med('stepping_us')} / {med('inference_us')} ({med('inference_node_us')}) / "
                 f"{med('inserting_us')}") if times else "-"
        cpu = [res["learner_cpu_us"] for res in rs if "learner_cpu_us" in res]
        upd = [res["learner_update_us"] for res in rs if "learner_update_us" in res]
        learner = (f"{statistics.median(cpu):.1f} ({statistics.median(upd):.1f})" if cpu else "-")
        cpus = [res.get("cpu_us_per_step") for res in rs]
        print(f"| {name} | {spread(rates)} | {ratio} | {spread(cpus)} | {actor} | {learner} |")


def same_host_speed(args):
    """(b) with 1, 2 and 4 actors, on one host's sockets and over TCP
    (--lp_same_host=off), in turn: what the calls cost the actors and the
    learner, and how close the agent runs to its learner-bound ceiling."""
    sides = (("sockets + shared memory", ()), ("TCP (--lp_same_host=off)", ("--lp_same_host=off",)))
    configs = [(f"{n} actor{'s' if n > 1 else ''}, {side}", n, extra)
               for n in (1, 2, 4) for side, extra in sides]
    results = {name: [] for name, _, _ in configs}
    for r in range(args.runs):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for name, actors, extra in order:
            res = run_agent(args.binary, actors, args.seconds, extra=extra)
            if "rate" not in res or "learner_update_us" not in res or not res.get("time"):
                print("\n".join(res["lines"][-30:]), file=sys.stderr)
                sys.exit(f"bench_agent: {name} did not report (exit {res['status']})")
            t = res["time"]
            res["wait_less_node_us"] = t["inference_us"] - (t["inference_node_us"] or 0.0)
            # Outside the update: the process's CPU less the update's CPU
            # (its wall time where the learner does not report that).
            res["learner_outside_us"] = res["learner_cpu_us"] - res.get(
                "learner_update_cpu_us", res["learner_update_us"])
            res["ceiling"] = res["rate"] * res["learner_update_us"] / 1e6
            results[name].append(res)
            print(f"round {r + 1}: {name}: {res['rate']:.0f} env steps/s, {res['ceiling']:.3f} of "
                  f"the ceiling; inference {t['inference_us']:.0f} us per actor step (node "
                  f"{t['inference_node_us'] or 0:.0f}); learner CPU {res['learner_cpu_us']:.2f} "
                  f"us/step, {res['learner_outside_us']:.2f} outside its update (update "
                  f"{res['learner_update_us']:.2f} us/step)", flush=True)
    print(f"\n{'BLAS from ' + BLAS_DIR if BLAS_DIR else 'the system BLAS'}: median (min-max) of "
          f"{args.runs} runs of {args.seconds:g} s of training each")
    print("| configuration | env steps/s | of the learner-bound ceiling | inference wait per actor "
          "step less the node's time, µs | the node's time per call, µs | learner CPU per step "
          "outside its update, µs | update µs/step |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, _, _ in configs:
        rs = results[name]

        def col(key, fmt="{:.2f}"):
            vals = [res[key] for res in rs]
            lo, mid, hi = min(vals), statistics.median(vals), max(vals)
            return f"{fmt.format(mid)} ({fmt.format(lo)}-{fmt.format(hi)})"

        node = [res["time"]["inference_node_us"] or 0.0 for res in rs]
        print(f"| {name} | {spread([res['rate'] for res in rs])} | {col('ceiling', '{:.3f}')} | "
              f"{col('wait_less_node_us', '{:.0f}')} | {statistics.median(node):.0f} "
              f"({min(node):.0f}-{max(node):.0f}) | {col('learner_outside_us')} | "
              f"{col('learner_update_us')} |")


def learn(args):
    rows = []
    for seed in range(args.seeds):
        res = run_agent(args.binary, args.actors, args.max_seconds, target=475.0, seed=seed,
                        timeout=args.max_seconds + 120)
        reached = res.get("why", "").startswith("reached")
        rows.append(("agent", seed, reached, res.get("steps"), res.get("seconds"), res["wall"]))
        print(f"agent seed {seed}: {'reached 475' if reached else res.get('why', 'no report')} after "
              f"{res.get('steps')} env steps, {res.get('seconds')} s of training, "
              f"{res['wall']:.1f} s from launch to exit", flush=True)
        if args.baseline:
            b = run_baseline(args.max_seconds, target=475.0, seed=seed)
            ok = b["why"] == "reached"
            rows.append(("baseline", seed, ok, b["steps"], b["seconds"], None))
            print(f"baseline seed {seed}: {'reached 475' if ok else b['why']} after {b['steps']} env "
                  f"steps, {b['seconds']:.1f} s", flush=True)
    for who in ("agent", "baseline"):
        mine = [r for r in rows if r[0] == who]
        if mine:
            print(f"{who}: reached 475 in {sum(r[2] for r in mine)} of {len(mine)} seeds; env steps "
                  f"{spread([r[3] for r in mine if r[2]])}; seconds "
                  f"{spread([r[4] for r in mine if r[2]])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the agent binary (a release build: build-release/examples/agent/agent)")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--learn", action="store_true")
    parser.add_argument("--same-host", action="store_true",
                        help="(b) on one host's sockets against --lp_same_host=off, alone")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--no_torch", action="store_true", help="leave out row (c)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--max_seconds", type=float, default=600.0)
    parser.add_argument("--baseline", action="store_true", help="--learn: the baseline too")
    parser.add_argument("--blas_dir", help="a directory with another libblas.so.3 (OpenBLAS: "
                        "dpkg -x libopenblas0-pthread_*.deb DIR; then "
                        "DIR/usr/lib/x86_64-linux-gnu/openblas-pthread) for PyTorch on both sides")
    args = parser.parse_args()
    global BLAS_DIR
    BLAS_DIR = args.blas_dir and os.path.abspath(args.blas_dir)
    args.binary = os.path.abspath(args.binary)
    if args.same_host:
        return same_host_speed(args)
    if args.learn:
        learn(args)
    if args.speed or not args.learn:
        speed(args)


if __name__ == "__main__":
    main()
