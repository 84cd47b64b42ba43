"""A Launchpad program's Python -> Python call against gRPC-Python, in one run.

    /usr/bin/python3 benchmarks/python_nodes/bench_launchpad.py [--quick] [--runs N]

Launches a program written with Launchpad's API (`import launchpad as lp`,
python/launchpad/) under local_mp on lp-launchpad (LP_LAUNCHPAD_LAUNCHER, or
build/lp-launchpad, or PATH): a CourierNode "target" serving add(x) -> x + 1,
and a PyNode "caller" given its handle. The caller times, in the same node
process and interleaved block by block (the order flipped every round):

1. blocking target.add(i) through its lp.CourierClient: Python -> Python
   between two node processes, over the program's own transport;
2. the same small call to gRPC-Python, the baseline of bench.py (its server,
   `bench.py --serve grpc`, in a process of its own; its client, one
   channel), what a Launchpad user would pick instead of Courier here.

Each result is checked; the caller also reads the CPU each server process
spends per call (its CPU clock around each block). It writes its samples to
a file of this run's and stops the program; this script prints one line per
run and, over the runs, the ranges. See benchmarks/python_nodes/README.md.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

import bench  # benchmarks/python_nodes/bench.py: the gRPC baseline, CPU clocks

import launchpad as lp  # bench put the checkout's python/ on sys.path


class Target:
    def add(self, x):
        return x + 1

    def pid(self):
        return os.getpid()


def measure(target, grpc_port, grpc_pid, rounds, block, result_file):
    """The caller node's run: the interleaved blocks, then the samples to
    `result_file` and the program stopped."""
    grpc = bench.Grpc(grpc_port, None)
    target_pid = target.pid()
    samples = {"lp": [], "grpc": []}
    cpu = {"lp": bench.Cpu(target_pid), "grpc": bench.Cpu(grpc_pid)}

    blocks = {"lp": lambda n: bench.timed_adds(target.add, n, "target.add"),
              "grpc": grpc.small_calls}
    try:
        for _ in range(2):  # warm up: connections, threads, the heap
            blocks["lp"](100), blocks["grpc"](100)
        for r in range(rounds):
            for key in (("lp", "grpc") if r % 2 == 0 else ("grpc", "lp")):
                samples[key].extend(cpu[key].block(lambda: blocks[key](block), block))
    finally:
        grpc.channel.close()
    with open(result_file, "w") as f:
        json.dump({"samples": samples,
                   "cpu_us": {k: c.per_call(1e6) for k, c in cpu.items()}}, f)
    lp.stop()


def one_run(grpc_server, rounds, block, result_file):
    program = lp.Program("bench_launchpad")
    target = program.add_node(lp.CourierNode(Target), label="target")
    program.add_node(lp.PyNode(measure, target, grpc_server.port, grpc_server.pid, rounds, block,
                               result_file), label="caller")
    controller = lp.launch(program, launch_type="local_mp")
    controller.wait(raise_error=False)
    status = controller.exit_status
    if status != 0:
        bench.fail(f"the Launchpad program ended with status {status}")
    with open(result_file) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--runs", type=int, default=5, help="launches, each a full measurement")
    options = parser.parse_args()
    try:
        import cloudpickle  # noqa: F401
        import grpc
    except ImportError as e:
        bench.fail(f"{e}: run this with Debian's /usr/bin/python3 (python3-grpcio, "
                   "python3-cloudpickle, python3-numpy, python3-cbor2)")
    if "LP_LAUNCHPAD_LAUNCHER" not in os.environ:
        built = os.path.join(bench.ROOT, "build", "lp-launchpad")
        if os.access(built, os.X_OK):
            os.environ["LP_LAUNCHPAD_LAUNCHER"] = built
    rounds, block = (4, 200) if options.quick else (20, 500)

    m = statistics.median
    print(f"launchpad Python -> Python call benchmark: {os.cpu_count()} cores, python "
          f"{sys.version.split()[0]}, grpcio {grpc.__version__}, local_mp, {rounds} rounds of "
          f"{block} calls each way per run{' (--quick)' if options.quick else ''}")
    print(f"{'run':>3} {'lp p50 us':>10} {'gRPC p50 us':>12} {'ratio':>6} {'lp p90':>8} "
          f"{'gRPC p90':>9} {'lp CPU us':>10} {'gRPC CPU us':>12} {'ratio':>6}  load")
    load_before = os.getloadavg()[0]
    ratios, cpu_ratios, lp50, grpc50 = [], [], [], []
    server = bench.Server("grpc")
    try:
        with tempfile.TemporaryDirectory(prefix="lp-bench-launchpad-") as directory:
            for run in range(options.runs):
                got = one_run(server, rounds, block, os.path.join(directory, f"run{run}.json"))
                s, cpu = got["samples"], got["cpu_us"]

                def p90(xs):
                    return sorted(xs)[int(0.9 * len(xs))]

                lp50.append(m(s["lp"]))
                grpc50.append(m(s["grpc"]))
                ratios.append(lp50[-1] / grpc50[-1])
                cpu_ratios.append(cpu["lp"] / cpu["grpc"])
                print(f"{run + 1:>3} {lp50[-1]:>10.1f} {grpc50[-1]:>12.1f} {ratios[-1]:>6.2f} "
                      f"{p90(s['lp']):>8.1f} {p90(s['grpc']):>9.1f} {cpu['lp']:>10.1f} "
                      f"{cpu['grpc']:>12.1f} {cpu_ratios[-1]:>6.2f}  {os.getloadavg()[0]:.2f}",
                      flush=True)
    finally:
        server.stop()
    print(f"over {options.runs} runs: lp p50 {min(lp50):.1f}-{max(lp50):.1f} us, gRPC-Python p50 "
          f"{min(grpc50):.1f}-{max(grpc50):.1f} us, ratio {min(ratios):.2f}-{max(ratios):.2f}; "
          f"server CPU per call ratio {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}")
    print("ratio = Launchpad program's call / gRPC-Python's, both timed in the caller node, "
          "interleaved; CPU: the target node's process / the gRPC server's, per call")
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
