"""Python nodes against gRPC-Python and a raw TCP echo, in one run.

    /usr/bin/python3 benchmarks/python_nodes/bench.py [--quick] [--peer PATH]

Launches peer.cpp (`python_nodes_bench_peer`, from a release build) under
local_mt with --lp_python=/usr/bin/python3: a Python node "pybench"
(bench_node.py), the C++ node "target" it calls, and the C++ node "driver"
that calls it. Then, interleaved round after round in the same run:

1. a small call `long add(long)` C++ -> Python (the driver's lp::client
   calling the Python node): p50 us of blocking calls, and calls/s with 8
   threads sharing the driver's one client;
2. the same call Python -> C++ (the Python node's handle of "target"):
   p50 and calls/s with 8 threads sharing the handle;
3. gRPC-Python, what a user would pick instead: a grpc server in its own
   process (generic unary handlers, bytes on the wire, no protoc), called
   from this process: p50 of add, calls/s with 8 threads sharing one
   channel, and an echo of 4 MB received as a numpy array;
4. a 4 MB float32 echo C++ -> Python -> C++: the driver's echo through the
   Python node (a numpy array there), against the same bytes over a plain
   TCP connection from the driver (C++) to a Python socket server in its own
   process that receives them into a numpy array with recv_into and sends
   them back;
5. the CPU each server process spends per call (its process CPU clock read
   before and after each block of calls): the Python node's, the gRPC
   server's, the raw echo server's.

It prints one table: value, baseline, ratio, goal, met. Every result and
every echo is checked against what was sent. See
benchmarks/python_nodes/README.md.

`bench.py --same-host` measures one row alone (issue 51): the 4 MB echo
C++ -> Python -> C++ of row 4 with the peer on one host's unix sockets and
shared memory (the default), against the same with a second peer launched
with --lp_same_host=off (loopback TCP), in units of a memcpy of the same 4 MB
in the driver's process, all interleaved; and the CPU of both processes (the
driver's and the Python node's) per echo.

`bench.py --serve grpc|tcp` is one of the baseline servers (run by the
script itself): it prints "<port> <pid>" and serves until its stdin ends.
"""

import argparse
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

ECHO_FLOATS = 1 << 20  # 4 MB of float32
MAX_MESSAGE = 64 << 20  # gRPC's default receive limit is 4 MB: a 4 MB echo is over it
GRPC_OPTIONS = [("grpc.max_receive_message_length", MAX_MESSAGE),
                ("grpc.max_send_message_length", MAX_MESSAGE)]
CALLERS = 8


def fail(message):
    print(f"python_nodes bench: {message}", file=sys.stderr)
    sys.exit(1)


# --- The baseline servers (separate processes). ------------------------------

def _wait_for_stdin_end():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass


def serve_grpc():
    """A grpc server with two unary methods, bytes on the wire: Add takes and
    returns an 8-byte integer, Echo a float32 array, as a user writes them
    without protoc."""
    from concurrent import futures

    import grpc
    import numpy as np

    def add(x, context):
        return x + 1

    def echo(values, context):
        return values  # a numpy array over the request's bytes

    def to_int(data):
        return int.from_bytes(data, "little", signed=True)

    def from_int(x):
        return x.to_bytes(8, "little", signed=True)

    handler = grpc.method_handlers_generic_handler("bench.Bench", {
        "Add": grpc.unary_unary_rpc_method_handler(add, request_deserializer=to_int,
                                                   response_serializer=from_int),
        "Echo": grpc.unary_unary_rpc_method_handler(
            echo, request_deserializer=lambda data: np.frombuffer(data, dtype=np.float32),
            response_serializer=lambda values: values.tobytes()),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2 * CALLERS), options=GRPC_OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, os.getpid(), flush=True)
    _wait_for_stdin_end()
    server.stop(0)


def serve_tcp():
    """A raw echo: each message an 8-byte length and that many bytes,
    received into a new numpy array (recv_into) and sent back from it."""
    import numpy as np

    listener = socket.create_server(("127.0.0.1", 0))

    def exactly(connection, view):
        have = 0
        while have < len(view):
            got = connection.recv_into(view[have:], len(view) - have)
            if not got:
                return have
            have += got
        return have

    def serve(connection):
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = bytearray(8)
        with connection:
            while exactly(connection, memoryview(head)) == 8:
                length = int.from_bytes(head, "little")
                values = np.empty(length // 4, dtype=np.float32)
                view = memoryview(values).cast("B")
                if exactly(connection, view) != length:
                    return
                connection.sendall(view)

    def accept_all():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept_all, daemon=True).start()
    print(listener.getsockname()[1], os.getpid(), flush=True)
    _wait_for_stdin_end()
    listener.close()


# --- Processes. --------------------------------------------------------------

def cpu_seconds(pid):
    """The process CPU time of `pid` (all its threads, live and ended): its
    CPU-time clock, clock_getcpuclockid(pid), which /proc/<pid>/stat's
    utime + stime count in 10 ms ticks, to the nanosecond."""
    return time.clock_gettime(((~pid) << 3) | 2)


def stat_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minor_faults(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _die_with_parent():
    """In a child, before exec: SIGTERM when this script ends, however it
    ends (prctl PR_SET_PDEATHSIG), so that no server or peer outlives it."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead too.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Server:
    """A baseline server process (`bench.py --serve kind`)."""

    def __init__(self, kind):
        self.kind = kind
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", kind],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        start_new_session=True, preexec_fn=_die_with_parent)
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().decode() if ready else ""
        if not re.fullmatch(r"\d+ \d+\n", line):
            self.stop()
            fail(f"the {kind} server did not start (it wrote {line!r})")
        self.port, self.pid = map(int, line.split())

    def stop(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def launch(peer, env, extra=()):
    """The peer under local_mt, serving: (process, {label: url}, secret)."""
    import launchpad_client as lp

    log = tempfile.NamedTemporaryFile(prefix="python-nodes-bench-", suffix=".log", delete=False)
    process = subprocess.Popen([peer, "--lp_launch=local_mt", "--lp_python=/usr/bin/python3",
                                *extra],
                               stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env,
                               start_new_session=True, preexec_fn=_die_with_parent)
    give_up = time.monotonic() + 60
    while True:
        with open(log.name, errors="replace") as f:
            text = f.read()
        found = dict(re.findall(r"\[lp\] (\S+) serving at (\S+)", text))
        secret_line = re.search(r"secret is in (\S+)/secret", text)
        if secret_line and {"target", "pybench", "driver"} <= found.keys():
            break
        if process.poll() is not None or time.monotonic() > give_up:
            stop_peer(process)
            fail(f"{peer} did not start serving within 60 s (a peer built from another commit "
                 f"than python/ may not; rebuild it). It wrote:\n{text}")
        time.sleep(0.05)
    return process, found, lp.read_secret(secret_line.group(1)), log.name


def stop_peer(process, node_pid=None):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    # The Python node is the peer's child in a process group of its own; it
    # stops when its host does. Make sure.
    if node_pid is not None:
        give_up = time.monotonic() + 15
        while alive(node_pid) and time.monotonic() < give_up:
            time.sleep(0.05)
        if alive(node_pid):
            print(f"python_nodes bench: the Python node (pid {node_pid}) outlived its host; "
                  "killing it", file=sys.stderr)
            try:
                os.kill(node_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --- Measuring. --------------------------------------------------------------

class Cpu:
    """CPU seconds and minor page faults of a process inside the blocks it
    measured, and the calls made in them; `client`, another process whose
    CPU counts over the same blocks."""

    def __init__(self, pid, client=None):
        self.pid, self.seconds, self.calls, self.faults = pid, 0.0, 0, 0
        self.client = client

    def block(self, run, calls):
        """Runs run() and returns its result; `calls`: how many calls it
        made, a number or a function of the result."""
        faults = minor_faults(self.pid)
        before = cpu_seconds(self.pid)
        client_before = cpu_seconds(self.client.pid) if self.client else 0.0
        result = run()
        self.seconds += cpu_seconds(self.pid) - before
        self.faults += minor_faults(self.pid) - faults
        n = int(calls(result)) if callable(calls) else calls
        self.calls += n
        if self.client:
            self.client.seconds += cpu_seconds(self.client.pid) - client_before
            self.client.calls += n
        return result

    def per_call(self, scale):
        return self.seconds / self.calls * scale if self.calls else float("nan")

    def faults_per_call(self):
        return self.faults / self.calls if self.calls else float("nan")


def grpc_rate(add, callers, seconds):
    """`callers` threads calling add through one channel for `seconds`:
    (calls, wall seconds). Checked."""
    start_line = threading.Barrier(callers + 1)
    counts = [0] * callers
    errors = []
    stop_at = [0.0]

    def caller(k):
        start_line.wait()
        n = 0
        try:
            while time.perf_counter() < stop_at[0]:
                if add(n) != n + 1:
                    raise ValueError(f"gRPC Add({n}) returned a wrong sum")
                n += 1
        except Exception as e:  # reported below
            errors.append(e)
        counts[k] = n

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    stop_at[0] = start + seconds
    start_line.wait()
    for t in threads:
        t.join(seconds + 120)
    wall = time.perf_counter() - start
    if errors:
        fail(str(errors[0]))
    return sum(counts), wall


def timed_adds(add, n, name):
    """Microseconds of each of n blocking add(i) calls, each checked to
    return i + 1 (`name`: the call, for the failure's message)."""
    out = []
    for i in range(n):
        start = time.perf_counter()
        got = add(i)
        out.append((time.perf_counter() - start) * 1e6)
        if got != i + 1:
            fail(f"{name}({i}) returned {got}")
    return out


class Grpc:
    """The gRPC client of the baseline: one channel, its methods with a
    deadline, and the timed loops."""

    def __init__(self, port, values):
        import grpc
        import numpy as np

        self.np, self.values = np, values
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=GRPC_OPTIONS)
        self._add = self.channel.unary_unary(
            "/bench.Bench/Add", request_serializer=lambda x: x.to_bytes(8, "little", signed=True),
            response_deserializer=lambda data: int.from_bytes(data, "little", signed=True))
        self._echo = self.channel.unary_unary(
            "/bench.Bench/Echo", request_serializer=lambda values: values.tobytes(),
            response_deserializer=lambda data: np.frombuffer(data, dtype=np.float32))

    def add(self, x):
        return self._add(x, timeout=60)

    def small_calls(self, n):
        """Microseconds of each of n blocking add(i) calls, checked."""
        return timed_adds(self.add, n, "gRPC Add")

    def rate(self, callers, seconds):
        return grpc_rate(self.add, callers, seconds)

    def echoes(self, n):
        """Milliseconds of each of n echoes of the 4 MB, checked."""
        out = []
        for _ in range(n):
            start = time.perf_counter()
            back = self._echo(self.values, timeout=60)
            out.append((time.perf_counter() - start) * 1e3)
            if not self.np.array_equal(back, self.values):
                fail("the gRPC echo differs from what was sent")
        return out


def measure(options, node_pid, driver, pybench, grpc_server, tcp_server):
    """The interleaved rounds: samples and CPU figures by key."""
    import numpy as np

    if options.quick:
        rounds, block, rate_s, echoes = 6, 200, 0.3, 2
    else:
        rounds, block, rate_s, echoes = 30, 500, 0.5, 3
    values = np.arange(ECHO_FLOATS, dtype=np.float32) * np.float32(0.5)  # peer.cpp's ramp()
    grpc = Grpc(grpc_server.port, values)
    try:
        # Warm up every path: connections, threads, the heap.
        for _ in range(2):
            driver.small_calls(50), grpc.small_calls(50), pybench.cpp_small_calls(50)
            driver.rate(CALLERS, 0.05), grpc.rate(CALLERS, 0.05), pybench.cpp_rate(CALLERS, 0.05)
            driver.echoes(1, ECHO_FLOATS), driver.raw_echoes(tcp_server.port, 1, ECHO_FLOATS)
            grpc.echoes(1)

        samples = {k: [] for k in ("lp_small", "grpc_small", "py_small", "lp_rate", "grpc_rate",
                                   "py_rate", "lp_echo", "raw_echo", "grpc_echo")}
        # The gRPC blocks also count this process's CPU: the gRPC client's,
        # what the Python node spends as a caller in rows 3 and 4.
        grpc_client = {k: Cpu(os.getpid()) for k in ("grpc_small", "grpc_rate")}
        cpu = {k: Cpu(pid, grpc_client.get(k)) for k, pid in (
            ("lp_small", node_pid), ("grpc_small", grpc_server.pid), ("py_small", node_pid),
            ("lp_rate", node_pid), ("grpc_rate", grpc_server.pid), ("py_rate", node_pid),
            ("lp_echo", node_pid), ("raw_echo", tcp_server.pid), ("grpc_echo", grpc_server.pid))}

        def times(key, run, calls):
            samples[key].extend(cpu[key].block(lambda: list(run()), calls))

        def rate(key, run):
            calls, wall = cpu[key].block(lambda: list(run()), lambda result: result[0])
            samples[key].append(calls / wall)

        stat_before, clock_before = stat_cpu_seconds(node_pid), cpu_seconds(node_pid)
        for r in range(rounds):
            small = [
                lambda: times("lp_small", lambda: driver.small_calls(block), block),
                lambda: times("grpc_small", lambda: grpc.small_calls(block), block),
                # The node's CPU here also counts the call that asks it to
                # make them: one in `block`.
                lambda: times("py_small", lambda: pybench.cpp_small_calls(block), block),
            ]
            rates = [
                lambda: rate("lp_rate", lambda: driver.rate(CALLERS, rate_s)),
                lambda: rate("grpc_rate", lambda: grpc.rate(CALLERS, rate_s)),
                lambda: rate("py_rate", lambda: pybench.cpp_rate(CALLERS, rate_s)),
            ]
            trips = [
                lambda: times("lp_echo", lambda: driver.echoes(echoes, ECHO_FLOATS), echoes),
                lambda: times("raw_echo", lambda: driver.raw_echoes(tcp_server.port, echoes,
                                                                    ECHO_FLOATS), echoes),
                lambda: times("grpc_echo", lambda: grpc.echoes(echoes), echoes),
            ]
            # Launchpad and its baselines in turn; the order flips every
            # round, so that none always runs first.
            for group in (small, rates, trips):
                for step in (group if r % 2 == 0 else reversed(group)):
                    step()
            print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
        node_cpu = (stat_cpu_seconds(node_pid) - stat_before, cpu_seconds(node_pid) - clock_before)
    finally:
        grpc.channel.close()
    return {"rounds": rounds, "rate_s": rate_s, "samples": samples, "cpu": cpu,
            "grpc_client": grpc_client, "node_cpu": node_cpu}


def report(options, figures, load, measured):
    import grpc
    import numpy as np
    from importlib.metadata import version

    import launchpad_client as lp

    m = statistics.median
    s, cpu, client = figures["samples"], figures["cpu"], figures["grpc_client"]

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    us, ms = "{:.1f}", "{:.2f}"
    rows = [  # name, value, baseline's name, baseline, goal (op, bound) or None, format
        ("1 C++ -> Python add, p50 us", m(s["lp_small"]), "gRPC-Python p50", m(s["grpc_small"]),
         ("<=", 0.7), us),
        ("2 C++ -> Python add, 8 callers, calls/s", m(s["lp_rate"]), "gRPC-Python 8 thr",
         m(s["grpc_rate"]), None, "{:.0f}"),
        ("3 Python -> C++ add, p50 us", m(s["py_small"]), "gRPC-Python p50", m(s["grpc_small"]),
         None, us),
        ("4 Python -> C++ add, 8 callers, calls/s", m(s["py_rate"]), "gRPC-Python 8 thr",
         m(s["grpc_rate"]), None, "{:.0f}"),
        ("5 echo 4 MB C++ -> Python, median ms", m(s["lp_echo"]), "raw TCP C++<->Py",
         m(s["raw_echo"]), ("<=", 1.5), ms),
        ("6   the same", m(s["lp_echo"]), "gRPC-Python echo", m(s["grpc_echo"]), None, ms),
        ("7 Python node CPU per add (row 1), us", cpu["lp_small"].per_call(1e6), "gRPC server's",
         cpu["grpc_small"].per_call(1e6), None, us),
        ("    8 callers (row 2), us", cpu["lp_rate"].per_call(1e6), "gRPC server's",
         cpu["grpc_rate"].per_call(1e6), None, us),
        ("    calling C++ (row 3), us", cpu["py_small"].per_call(1e6), "gRPC client's",
         client["grpc_small"].per_call(1e6), None, us),
        ("    calling C++, 8 callers (row 4), us", cpu["py_rate"].per_call(1e6), "gRPC client's",
         client["grpc_rate"].per_call(1e6), None, us),
        ("8 Python node CPU per 4 MB echo, ms", cpu["lp_echo"].per_call(1e3), "raw echo server's",
         cpu["raw_echo"].per_call(1e3), None, ms),
        ("    the same", cpu["lp_echo"].per_call(1e3), "gRPC server's",
         cpu["grpc_echo"].per_call(1e3), None, ms),
    ]
    print(f"launchpad {lp.__version__} Python nodes benchmark: {os.cpu_count()} cores, python "
          f"{sys.version.split()[0]}, grpcio {grpc.__version__}, numpy {np.__version__}, cbor2 "
          f"{version('cbor2')}{' (--quick)' if options.quick else ''}")
    print(f"{'benchmark':41} {'value':>9}  {'baseline':19} {'value':>9} {'ratio':>6}  "
          f"{'goal':8} met?")
    for name, value, base_name, base, goal, fmt in rows:
        ratio = value / base if base else float("nan")
        goal_text, met = "-", ""
        if goal:
            op, bound = goal
            goal_text = f"{op} {bound:.2f}"
            met = "ok" if (ratio <= bound if op == "<=" else ratio >= bound) else "MISSED"
        print(f"{name:41} {fmt.format(value):>9}  {base_name:19} {fmt.format(base):>9} "
              f"{ratio:>6.2f}  {goal_text:8} {met}".rstrip())
    stat, clock = figures["node_cpu"]
    print(f"ratio = Python node / baseline, both measured in this run, interleaved "
          f"({figures['rounds']} rounds).")
    print(f"1,3: {len(s['lp_small'])} blocking calls each way; p90 us: C++ -> Python "
          f"{pct(s['lp_small'], 0.9):.1f}, Python -> C++ {pct(s['py_small'], 0.9):.1f}, gRPC "
          f"{pct(s['grpc_small'], 0.9):.1f}")
    print(f"2,4: {CALLERS} threads, {figures['rounds']} trials of {figures['rate_s']} s each way; "
          "C++ callers share the driver's one lp::client, Python callers the node's one handle, "
          "gRPC callers one channel")
    print(f"5,6: {len(s['lp_echo'])} echoes each of 1M float32; raw TCP: the driver (C++) to a "
          "Python socket server that recv_into()s a new numpy array and sendall()s it back")
    print("7,8: CPU of the server process (or the caller's, where it says client) per call, its "
          "CPU clock read around each block;")
    print(f"     the node's over the rounds: {clock:.2f} s by its clock, {stat:.2f} s by "
          "/proc/<pid>/stat")
    print(f"8: minor page faults per echo: the node {cpu['lp_echo'].faults_per_call():.0f}, the raw "
          f"echo server {cpu['raw_echo'].faults_per_call():.0f}, the gRPC server "
          f"{cpu['grpc_echo'].faults_per_call():.0f}")
    print(f"load average {load[0]:.2f} before, {load[1]:.2f} after; total {measured:.1f} s")


def same_host(options, env):
    """The 4 MB echo C++ -> Python -> C++ over one host's unix sockets and
    shared memory, against the same over loopback TCP (a second peer, with
    --lp_same_host=off) and a memcpy of the 4 MB in the driver's process,
    interleaved, the order rotating; and the CPU of the driver's process and
    the Python node's per echo. Prints its table."""
    import launchpad_client as lp

    rounds, echoes = (6, 2) if options.quick else (30, 4)
    load_before, started = os.getloadavg()[0], time.monotonic()
    peers, node_pids, programs, logs = {}, {}, [], []
    try:
        sides = {}
        for key, extra in (("socket", ()), ("tcp", ("--lp_same_host=off",))):
            peer, urls, secret, log_name = launch(options.peer, env, extra)
            peers[key] = peer
            logs.append(log_name)
            if key == "socket":
                node_metrics = (urls["pybench"], secret)
            program = lp.Program(urls, secret, timeout=300)
            programs.append(program)
            node_pid = node_pids[key] = program["pybench"].pid()
            if parent_of(node_pid) != peer.pid:
                fail(f"the Python node's pid {node_pid} is not a child of the peer ({peer.pid})")
            sides[key] = (program["driver"], node_pid, peer.pid)
        driver = sides["socket"][0]
        for key in ("socket", "tcp"):  # warm up: connections, segments, the heap
            sides[key][0].echoes(3, ECHO_FLOATS)
        driver.copies(3, ECHO_FLOATS)
        ms = {"socket": [], "tcp": [], "memcpy": []}
        cpu = {"socket": [0.0, 0.0], "tcp": [0.0, 0.0]}  # driver's process, the node's
        for r in range(rounds):
            order = ["socket", "tcp", "memcpy"]
            order = order[r % 3:] + order[:r % 3]
            for key in order:
                if key == "memcpy":
                    ms[key].extend(driver.copies(echoes, ECHO_FLOATS))
                    continue
                d, node_pid, peer_pid = sides[key]
                before = (cpu_seconds(peer_pid), cpu_seconds(node_pid))
                ms[key].extend(d.echoes(echoes, ECHO_FLOATS))
                cpu[key][0] += cpu_seconds(peer_pid) - before[0]
                cpu[key][1] += cpu_seconds(node_pid) - before[1]
        messages = shared_memory_messages(*node_metrics)
    finally:
        for program in programs:
            program.close()
        for key, peer in peers.items():
            stop_peer(peer, node_pids.get(key))
        for log_name in logs:
            os.unlink(log_name)
    m = statistics.median
    n = rounds * echoes
    copy = m(ms["memcpy"])
    print(f"launchpad {lp.__version__} Python nodes, one host (--same-host): {os.cpu_count()} "
          f"cores, python {sys.version.split()[0]}{' (--quick)' if options.quick else ''}")
    print(f"{'benchmark':44} {'value':>9} {'memcpy':>9} {'ratio':>6}  {'goal':8} met?")
    for key, goal in (("socket", 4.0), ("tcp", None)):
        value = m(ms[key])
        ratio = value / copy
        met = ("ok" if ratio <= goal else "MISSED") if goal else ""
        name = ("echo 4 MB C++ -> Python -> C++, socket, ms" if key == "socket"
                else "  the same over TCP (--lp_same_host=off), ms")
        print(f"{name:44} {value:9.2f} {copy:9.3f} {ratio:6.2f}  "
              f"{'<= ' + format(goal, '.2f') if goal else '-':8} {met}".rstrip())
    for key in ("socket", "tcp"):
        total = (cpu[key][0] + cpu[key][1]) / n * 1e3
        print(f"{'  CPU ms/echo, ' + key + ' (driver + node)':44} {total:9.2f} {copy:9.3f} "
              f"{total / copy:6.2f}  -        (driver {cpu[key][0] / n * 1e3:.2f}, "
              f"node {cpu[key][1] / n * 1e3:.2f})")
    print(f"ratio = value / the median memcpy of the same 4 MB in the driver's process; "
          f"{n} echoes each way, {rounds} rounds")
    print(f"the socket peer's Python node: lp_shared_memory_messages_total {messages:.0f}")
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"total {time.monotonic() - started:.1f} s")
    if messages < n:
        fail("the socket peer's echoes did not go through shared memory")


def shared_memory_messages(url, secret):
    """The Python node's lp_shared_memory_messages_total (its metrics over
    TCP): the messages whose arrays went through shared memory."""
    import urllib.request

    request = urllib.request.Request(url + "/lp/v1/metrics",
                                     headers={"Authorization": "Bearer " + secret})
    for line in urllib.request.urlopen(request, timeout=10).read().decode().splitlines():
        if line.startswith("lp_shared_memory_messages_total"):
            return float(line.rpartition(" ")[2])
    fail("the Python node has no lp_shared_memory_messages_total")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of about 10 s")
    parser.add_argument("--peer", default=os.environ.get(
        "LP_PYTHON_NODES_BENCH_PEER",
        os.path.join(ROOT, "build-release", "benchmarks", "python_nodes", "python_nodes_bench_peer")))
    parser.add_argument("--same-host", action="store_true",
                        help="the 4 MB echo over one host's sockets against TCP and memcpy, alone")
    parser.add_argument("--serve", choices=["grpc", "tcp"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve == "grpc":
        return serve_grpc()
    if options.serve == "tcp":
        return serve_tcp()

    try:
        import grpc  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        fail(f"{e}: run this with Debian's /usr/bin/python3 (python3-grpcio, python3-numpy, "
             "python3-cbor2)")
    import launchpad_client as lp
    if not (lp.have_cbor() and lp.have_numpy()):
        fail("the Python node's arrays are numpy arrays over CBOR: install python3-cbor2 and "
             "python3-numpy")
    if not os.access(options.peer, os.X_OK):
        fail(f"no peer program at {options.peer}; build it: meson compile -C build-release "
             "python_nodes_bench_peer, or pass --peer")

    # SIGTERM ends the run as Ctrl+C does: through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python"), HERE] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if options.same_host:
        return same_host(options, env)
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    peer = program = node_pid = log_name = None
    servers = []
    try:
        servers.append(Server("grpc"))
        servers.append(Server("tcp"))
        peer, urls, secret, log_name = launch(options.peer, env)
        program = lp.Program(urls, secret, timeout=300)
        driver, pybench = program["driver"], program["pybench"]
        node_pid = pybench.pid()
        if parent_of(node_pid) != peer.pid:
            fail(f"the Python node's pid {node_pid} is not a child of the peer ({peer.pid})")
        figures = measure(options, node_pid, driver, pybench, *servers)
        measured = time.monotonic() - started
    except BaseException:
        # What the program said may tell why it failed.
        if log_name:
            with open(log_name, errors="replace") as f:
                tail = f.read().splitlines()[-20:]
            print("python_nodes bench: the peer's last lines:\n  " + "\n  ".join(tail),
                  file=sys.stderr)
        raise
    finally:
        if program is not None:
            program.close()
        if peer is not None:
            stop_peer(peer, node_pid)
        for server in servers:
            server.stop()
        if log_name:
            os.unlink(log_name)
    report(options, figures, (load_before, os.getloadavg()[0]), measured)


if __name__ == "__main__":
    main()
