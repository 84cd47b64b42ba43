"""A Launchpad program's Python -> Python call against gRPC-Python, in one run.

    /usr/bin/python3 benchmarks/python_nodes/bench_launchpad.py [--quick] [--runs N]
    /usr/bin/python3 benchmarks/python_nodes/bench_launchpad.py --cpp [EXECUTABLE] [--quick]

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

With --cpp, the program has a third node, an lp.CppNode of EXECUTABLE (by
default build/examples/launchpad_cpp, whose Calculator serves add(a, b)),
and the caller times, interleaved block by block (the order rotating each
round), blocking calculator.add(i, 1) (Python -> C++) against
target.add2(i, 1) (Python -> Python, the same arguments) through their
lp.CourierClients; no gRPC.
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

    def add2(self, a, b):
        return a + b

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


def measure_cpp(target, calculator, rounds, block, result_file):
    """--cpp's caller: Python -> C++ against Python -> Python, the same
    two-argument add, blocks rotating."""
    blocks = {"py": lambda n: bench.timed_adds(lambda i: target.add2(i, 1), n, "target.add2"),
              "cpp": lambda n: bench.timed_adds(lambda i: calculator.add(i, 1), n,
                                                "calculator.add")}
    samples = {"py": [], "cpp": []}
    for _ in range(2):
        blocks["py"](100), blocks["cpp"](100)
    for r in range(rounds):
        for key in (("py", "cpp") if r % 2 == 0 else ("cpp", "py")):
            samples[key].extend(blocks[key](block))
    with open(result_file, "w") as f:
        json.dump({"samples": samples}, f)
    lp.stop()


def one_cpp_run(executable, rounds, block, result_file):
    program = lp.Program("bench_launchpad_cpp")
    target = program.add_node(lp.CourierNode(Target), label="target")
    calculator = program.add_node(lp.CppNode(executable), label="calculator")
    program.add_node(lp.PyNode(measure_cpp, target, calculator, rounds, block, result_file),
                     label="caller")
    controller = lp.launch(program, launch_type="local_mp")
    controller.wait(raise_error=False)
    if controller.exit_status != 0:
        bench.fail(f"the Launchpad program ended with status {controller.exit_status}")
    with open(result_file) as f:
        return json.load(f)


def cpp_main(executable, runs, rounds, block, quick):
    m = statistics.median
    print(f"launchpad Python -> C++ call benchmark: {os.cpu_count()} cores, python "
          f"{sys.version.split()[0]}, local_mp, {executable}, {rounds} rounds of {block} calls "
          f"each way per run{' (--quick)' if quick else ''}")
    print(f"{'run':>3} {'C++ p50 us':>11} {'Py p50 us':>10} {'ratio':>6} {'C++ p90':>8} "
          f"{'Py p90':>8}  load")
    ratios, cpp50, py50 = [], [], []
    with tempfile.TemporaryDirectory(prefix="lp-bench-launchpad-") as directory:
        for run in range(runs):
            s = one_cpp_run(executable, rounds, block,
                            os.path.join(directory, f"run{run}.json"))["samples"]
            cpp50.append(m(s["cpp"]))
            py50.append(m(s["py"]))
            ratios.append(cpp50[-1] / py50[-1])

            def p90(xs):
                return sorted(xs)[int(0.9 * len(xs))]

            print(f"{run + 1:>3} {cpp50[-1]:>11.1f} {py50[-1]:>10.1f} {ratios[-1]:>6.2f} "
                  f"{p90(s['cpp']):>8.1f} {p90(s['py']):>8.1f}  {os.getloadavg()[0]:.2f}",
                  flush=True)
    print(f"over {runs} runs: Python -> C++ p50 {min(cpp50):.1f}-{max(cpp50):.1f} us, "
          f"Python -> Python p50 {min(py50):.1f}-{max(py50):.1f} us, ratio "
          f"{min(ratios):.2f}-{max(ratios):.2f}")
    print("ratio = the call to the CppNode / the same call to a Python CourierNode, both timed "
          "in the caller node, interleaved")


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
    parser.add_argument("--cpp", nargs="?", const=os.path.join(bench.ROOT, "build", "examples",
                                                              "launchpad_cpp"),
                        metavar="EXECUTABLE", help="Python -> C++ (an lp.CppNode) against "
                        "Python -> Python instead")
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
    if options.cpp:
        cpp_main(os.path.abspath(options.cpp), options.runs, rounds, block, options.quick)
        return

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
