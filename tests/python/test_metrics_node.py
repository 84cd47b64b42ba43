"""User metrics of a Python node (launchpad_client.metrics), as lp::metrics
is for a C++ node: names and values through GET /lp/v1/metrics in JSON and
in the Prometheus text, recorded from several threads at once, bad names
and a counter's negative amount refused with a message that says what to
do, and the output in the C++ node's shapes, names, types and help: against
an expectation taken from a C++ node (below), and live against the nodes of
the actor_learner example when LP_EXAMPLE_ACTOR_LEARNER names it. And the
node's own figures of its calls as a C++ node writes them: the
lp_call_duration_seconds histogram (its buckets, _sum and _count) and the
calls to a method the node lacks, under method="(none)"."""

import json
import math
import os
import re
import shutil
import socket
import threading
import time
import unittest
from unittest import mock

import launchpad_client as lp
from launchpad_client import metrics
from launchpad_client import NodeServer
from programs import ACTOR_LEARNER, STARTUP, Launched

SECRET = "0123456789abcdef0123456789abcdef"

# What a C++ node answered, for the figures that `record_as_the_cpp_node`
# records (the same calls through lp::metrics) and for the calls that
# `call_as_the_cpp_program` makes, in this program (g++ 12.2;
# g++ -std=c++20 -Iinclude x.cpp -lcpp-httplib -lssl -lcrypto), whose
# output is below. To take it again after a change to the C++ exposition:
#
#   struct Recorder {
#     int record() {
#       lp::metrics::counter("episodes").add(1);
#       lp::metrics::counter("episodes").add(2.5);
#       lp::metrics::counter("steps_total").add(1e20);
#       lp::metrics::counter("zero");
#       lp::metrics::gauge("replay_size").set(0.1);
#       lp::metrics::gauge("neg").set(-3);
#       lp::metrics::gauge("big").set(123456789012345678.0);
#       lp::metrics::gauge("tiny").set(1e-7);
#       lp::metrics::gauge("nan_g").set(std::nan(""));
#       lp::metrics::gauge("inf_g").set(INFINITY);
#       lp::metrics::gauge("ninf_g").set(-INFINITY);
#       lp::metrics::gauge("whole").set(3);
#       lp::metrics::series("empty_series");
#       lp::metrics::series("ret").record(0.5);
#       lp::metrics::series("ret").record(-1);
#       lp::metrics::series("ret").record(2);
#       lp::metrics::series("nan_s").record(std::nan(""));
#       for (int i = 0; i < 1005; ++i) lp::metrics::series("long_series").record(i);
#       return 0;
#     }
#     int ping(int x) { return x; }
#   };
#   LP_SERVICE(Recorder, record, ping);
#
#   int main() {  // prints GET /lp/v1/metrics, as text and as JSON
#     lp::program p("metrics");
#     auto r = p.add_node<Recorder>("learner");
#     auto running = lp::launch<lp::test_multi_threading>(p);
#     running.client(r).record();
#     for (int i = 0; i < 3; ++i) running.client(r).ping(i);
#     httplib::Client http(running.urls().at("learner"));
#     httplib::Headers auth{{"Authorization", "Bearer " + running.secret()}};
#     http.Post("/lp/v1/call/nope", auth, "[]", "application/json");
#     std::cout << http.Get("/lp/v1/metrics", auth)->body;
#     auth.emplace("Accept", "application/json");
#     std::cout << http.Get("/lp/v1/metrics", auth)->body << "\n";
#   }
#
# Its user families in the Prometheus text, after the lp_ families ...
CPP_USER_TEXT = """\
# HELP big lp::metrics::gauge("big")
# TYPE big gauge
big{node="learner"} 1.2345678901234568e+17
# HELP episodes_total lp::metrics::counter("episodes")
# TYPE episodes_total counter
episodes_total{node="learner"} 3.5
# HELP inf_g lp::metrics::gauge("inf_g")
# TYPE inf_g gauge
inf_g{node="learner"} inf
# HELP long_series The last value of lp::metrics::series("long_series")
# TYPE long_series gauge
long_series{node="learner"} 1004
# HELP nan_g lp::metrics::gauge("nan_g")
# TYPE nan_g gauge
nan_g{node="learner"} nan
# HELP nan_s The last value of lp::metrics::series("nan_s")
# TYPE nan_s gauge
nan_s{node="learner"} nan
# HELP neg lp::metrics::gauge("neg")
# TYPE neg gauge
neg{node="learner"} -3
# HELP ninf_g lp::metrics::gauge("ninf_g")
# TYPE ninf_g gauge
ninf_g{node="learner"} -inf
# HELP replay_size lp::metrics::gauge("replay_size")
# TYPE replay_size gauge
replay_size{node="learner"} 0.10000000000000001
# HELP ret The last value of lp::metrics::series("ret")
# TYPE ret gauge
ret{node="learner"} 2
# HELP steps_total lp::metrics::counter("steps_total")
# TYPE steps_total counter
steps_total{node="learner"} 1e+20
# HELP tiny lp::metrics::gauge("tiny")
# TYPE tiny gauge
tiny{node="learner"} 9.9999999999999995e-08
# HELP whole lp::metrics::gauge("whole")
# TYPE whole gauge
whole{node="learner"} 3
# HELP zero_total lp::metrics::counter("zero")
# TYPE zero_total counter
zero_total{node="learner"} 0
"""
# ... its families of calls, first in the text (the values of time and
# bytes are that run's; the counts are the calls'), ...
CPP_CALLS_TEXT = """\
# HELP lp_calls_total Calls to a method of the node, by HTTP status.
# TYPE lp_calls_total counter
lp_calls_total{node="learner",method="record",code="200"} 1
lp_calls_total{node="learner",method="ping",code="200"} 3
lp_calls_total{node="learner",method="(none)",code="404"} 1
# HELP lp_call_duration_seconds Time from a call's arrival to its reply, on the node (a direct call: from when the caller made it).
# TYPE lp_call_duration_seconds histogram
lp_call_duration_seconds_bucket{node="learner",method="record",le="5.0000000000000002e-05"} 0
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.0001"} 0
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.00025000000000000001"} 0
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.00050000000000000001"} 0
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.001"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.0025000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.0050000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.01"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.025000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.050000000000000003"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.10000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.25"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="0.5"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="1"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="2.5"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="5"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="10"} 1
lp_call_duration_seconds_bucket{node="learner",method="record",le="+Inf"} 1
lp_call_duration_seconds_sum{node="learner",method="record"} 0.00057814300000000004
lp_call_duration_seconds_count{node="learner",method="record"} 1
lp_call_duration_seconds_bucket{node="learner",method="ping",le="5.0000000000000002e-05"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.0001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.00025000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.00050000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.0025000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.0050000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.01"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.025000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.050000000000000003"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.10000000000000001"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.25"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="0.5"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="1"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="2.5"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="5"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="10"} 3
lp_call_duration_seconds_bucket{node="learner",method="ping",le="+Inf"} 3
lp_call_duration_seconds_sum{node="learner",method="ping"} 2.2604000000000002e-05
lp_call_duration_seconds_count{node="learner",method="ping"} 3
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="5.0000000000000002e-05"} 0
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.0001"} 0
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.00025000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.00050000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.0025000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.0050000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.01"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.025000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.050000000000000003"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.10000000000000001"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.25"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="0.5"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="1"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="2.5"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="5"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="10"} 1
lp_call_duration_seconds_bucket{node="learner",method="(none)",le="+Inf"} 1
lp_call_duration_seconds_sum{node="learner",method="(none)"} 0.000185312
lp_call_duration_seconds_count{node="learner",method="(none)"} 1
# HELP lp_calls_in_flight Calls to a method being answered now.
# TYPE lp_calls_in_flight gauge
lp_calls_in_flight{node="learner",method="record"} 0
lp_calls_in_flight{node="learner",method="ping"} 0
lp_calls_in_flight{node="learner",method="(none)"} 0
# HELP lp_call_request_bytes_total Bytes of the calls' bodies.
# TYPE lp_call_request_bytes_total counter
lp_call_request_bytes_total{node="learner",method="record"} 1
lp_call_request_bytes_total{node="learner",method="ping"} 6
lp_call_request_bytes_total{node="learner",method="(none)"} 2
# HELP lp_call_reply_bytes_total Bytes of the replies' bodies.
# TYPE lp_call_reply_bytes_total counter
lp_call_reply_bytes_total{node="learner",method="record"} 9
lp_call_reply_bytes_total{node="learner",method="ping"} 27
lp_call_reply_bytes_total{node="learner",method="(none)"} 145
"""
# ... its JSON's user figures (each series as its values, with their times;
# a NaN or an infinity is null, as nlohmann writes it) ...
CPP_USER_JSON = {
    "counters": {"episodes": 3.5, "steps_total": 1e20, "zero": 0.0},
    "gauges": {"big": 1.2345678901234568e17, "inf_g": None, "nan_g": None, "neg": -3.0,
               "ninf_g": None, "replay_size": 0.1, "tiny": 1e-07, "whole": 3.0},
    "series_values": {"empty_series": [], "long_series": [float(i) for i in range(5, 1005)],
                      "nan_s": [None], "ret": [0.5, -1.0, 2.0]},
}
# ... the help and type of its own families, in their order ...
CPP_LP_FAMILIES = """\
# HELP lp_calls_total Calls to a method of the node, by HTTP status.
# TYPE lp_calls_total counter
# HELP lp_call_duration_seconds Time from a call's arrival to its reply, on the node (a direct call: from when the caller made it).
# TYPE lp_call_duration_seconds histogram
# HELP lp_calls_in_flight Calls to a method being answered now.
# TYPE lp_calls_in_flight gauge
# HELP lp_call_request_bytes_total Bytes of the calls' bodies.
# TYPE lp_call_request_bytes_total counter
# HELP lp_call_reply_bytes_total Bytes of the replies' bodies.
# TYPE lp_call_reply_bytes_total counter
# HELP lp_process_resident_memory_bytes Resident memory of the node's process.
# TYPE lp_process_resident_memory_bytes gauge
# HELP lp_process_cpu_seconds_total CPU time of the node's process.
# TYPE lp_process_cpu_seconds_total counter
# HELP lp_process_threads Threads of the node's process.
# TYPE lp_process_threads gauge
# HELP lp_open_connections Connections open on the node's server.
# TYPE lp_open_connections gauge
# HELP lp_restarts_total Restarts of the node's process by its launcher.
# TYPE lp_restarts_total counter
# HELP lp_shared_memory_bytes Bytes of shared memory the node's process holds for calls on its host.
# TYPE lp_shared_memory_bytes gauge
# HELP lp_shared_memory_messages_total Messages of the node's process whose large arrays went through shared memory.
# TYPE lp_shared_memory_messages_total counter
# HELP lp_shared_memory_fallbacks_total Messages of the node's process whose large arrays went through the socket, its shared memory at its cap.
# TYPE lp_shared_memory_fallbacks_total counter
# HELP lp_shared_memory_kept_total Shared memory the node's process lent that a peer kept.
# TYPE lp_shared_memory_kept_total counter
"""
# ... and the keys of its JSON, and of a method's entry in "methods".
CPP_JSON_KEYS = {"node", "pid", "host", "resident_bytes", "cpu_seconds", "threads", "connections",
                 "restarts", "shared_memory", "latency_bounds", "methods", "counters", "gauges",
                 "series"}
CPP_METHOD_KEYS = {"name", "calls", "by_code", "latency_buckets", "fastest", "slowest",
                   "in_flight", "request_bytes", "reply_bytes", "batches"}
CPP_TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def record_as_the_cpp_node():
    """The C++ program's calls (above), in the same order, in Python."""
    metrics.counter("episodes").add(1)
    metrics.counter("episodes").add(2.5)
    metrics.counter("steps_total").add(1e20)
    metrics.counter("zero")
    for name, value in [("replay_size", 0.1), ("neg", -3), ("big", 123456789012345678.0),
                        ("tiny", 1e-7), ("nan_g", math.nan), ("inf_g", math.inf),
                        ("ninf_g", -math.inf), ("whole", 3)]:
        metrics.gauge(name).set(value)
    metrics.series("empty_series")
    for value in (0.5, -1, 2):
        metrics.series("ret").record(value)
    metrics.series("nan_s").record(math.nan)
    long_series = metrics.series("long_series")
    for i in range(1005):
        long_series.record(i)


def get(url, path, headers, method="GET", body=b""):
    """GET (or `method` with `body`) over a fresh connection: (status,
    Content-Type, body as text)."""
    host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
    fields = {"Host": host, "Connection": "close", **headers}
    if body:
        fields["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    content_type = next((line.split(":", 1)[1].strip() for line in lines[1:]
                         if line.lower().startswith("content-type:")), "")
    return int(lines[0].split()[1]), content_type, body.decode()


def scrape(url, secret=SECRET):
    """The node's metrics: (JSON, Prometheus text, the text's Content-Type)."""
    auth = {"Authorization": f"Bearer {secret}"}
    status, _, body = get(url, "/lp/v1/metrics", {**auth, "Accept": "application/json"})
    if status != 200:
        raise AssertionError(f"GET /lp/v1/metrics (JSON) answered {status}: {body[:500]}")
    figures = json.loads(body)
    status, content_type, text = get(url, "/lp/v1/metrics", auth)
    if status != 200:
        raise AssertionError(f"GET /lp/v1/metrics answered {status}: {text[:500]}")
    return figures, text, content_type


def families(text):
    """{family: [its lines]} in the order of the text."""
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            current = line.split()[2]
            out[current] = []
        if line and current is not None:
            out[current].append(line)
    return out


def user_text(text):
    """The families that are not the library's (lp_), as text."""
    return "".join(line + "\n" for name, lines in families(text).items()
                   if not name.startswith("lp_") for line in lines)


def sample(text, name):
    """The value of the first sample of `name`, or None."""
    match = re.search(rf"^{re.escape(name)}{{[^}}]*}} (\S+)$", text, re.M)
    return float(match.group(1)) if match else None


def call_missing(url, body=b"[]"):
    """POST /lp/v1/call/nope, a method no node here has: (status, body)."""
    status, _, text = get(url, "/lp/v1/call/nope", {"Authorization": f"Bearer {SECRET}",
                                                    "Content-Type": "application/json"},
                          "POST", body)
    return status, text


def calls_text(text):
    """The families of calls, the text's first: up to the process's."""
    return text[:text.index("# HELP lp_process_resident_memory_bytes")]


def shape(text):
    """The text with each sample's value as V: its families, names, labels
    and their order, without the figures."""
    return "".join((line if line.startswith("#") else line.rsplit(" ", 1)[0] + " V") + "\n"
                   for line in text.splitlines())


def histogram(text, method):
    """lp_call_duration_seconds of `method`: ([(le, cumulative count)], sum,
    count), each as the text writes it."""
    labels = f'node="learner",method="{method}"'
    buckets = re.findall(
        rf'^lp_call_duration_seconds_bucket{{{re.escape(labels)},le="([^"]+)"}} (\S+)$', text, re.M)
    total = re.search(rf"^lp_call_duration_seconds_sum{{{re.escape(labels)}}} (\S+)$", text, re.M)
    count = re.search(rf"^lp_call_duration_seconds_count{{{re.escape(labels)}}} (\S+)$", text, re.M)
    return buckets, total.group(1), count.group(1)


class Recorder:
    """The C++ program's service (above), without its figures."""

    def record(self) -> int:
        return 0

    def ping(self, x: int) -> int:
        return x


def call_as_the_cpp_program(server):
    """The C++ program's calls (above), in the same order, to `server`."""
    with lp.connect(server.url, secret=SECRET) as node:
        node.record()
        for i in range(3):
            node.ping(i)
    wait_counted(server)
    return call_missing(server.url)


def wait_counted(server):
    """Waits for the calls made to be counted: a call is, once its reply is
    sent, on the server's thread (and call_missing reads until the node
    closes, after it counted)."""
    if not server.wait_idle(10):
        raise AssertionError("the node's calls did not end in 10 s")


class Served:
    """A node that records its figures as a C++ node would."""

    def step(self, reward: float) -> int:
        metrics.counter("episodes").add()
        metrics.gauge("replay_size").set(reward * 10)
        metrics.series("episode_return").record(reward)
        return int(metrics.counter("episodes").value())


class FreshRegistry(unittest.TestCase):
    """Each test records into a registry of its own, not the process's."""

    def setUp(self):
        patch = mock.patch.object(metrics, "_registry", metrics._Registry())
        patch.start()
        self.addCleanup(patch.stop)

    def serve(self, target=None, node="learner"):
        server = NodeServer(target or Served(), node=node, program="metrics",
                            secret=SECRET).start()
        self.addCleanup(server.close)
        return server


class RoundTrip(FreshRegistry):
    def test_names_and_values_in_json_and_prometheus(self):
        server = self.serve()
        node = lp.connect(server.url, secret=SECRET)
        self.addCleanup(node.close)
        for reward in (0.5, -1.0, 2.0):
            node.step(reward)
        metrics.counter("frames_total").add(7)  # named *_total: exported as it is
        metrics.gauge("learning_rate").set(3e-4)
        figures, text, content_type = scrape(server.url)
        self.assertEqual(figures["counters"], {"episodes": 3.0, "frames_total": 7.0})
        self.assertEqual(figures["gauges"], {"learning_rate": 3e-4, "replay_size": 20.0})
        points = figures["series"]["episode_return"]
        self.assertEqual([v for _, v in points], [0.5, -1.0, 2.0])
        times = [t for t, _ in points]
        self.assertEqual(times, sorted(times))
        self.assertLess(abs(times[-1] - time.time()), 60)  # seconds since the epoch

        self.assertEqual(content_type, CPP_TEXT_TYPE)
        self.assertIn('# TYPE episodes_total counter\nepisodes_total{node="learner"} 3\n', text)
        self.assertIn('# TYPE frames_total counter\nframes_total{node="learner"} 7\n', text)
        self.assertIn('# TYPE learning_rate gauge\nlearning_rate{node="learner"} '
                      '0.00029999999999999997\n', text)
        self.assertIn('# HELP episode_return The last value of lp::metrics::series("episode_return")\n'
                      '# TYPE episode_return gauge\nepisode_return{node="learner"} 2\n', text)
        self.assertEqual(sample(text, "replay_size"), 20.0)
        # The library's figures still come first, the calls counted.
        self.assertTrue(text.startswith("# HELP lp_calls_total "), text[:200])
        self.assertEqual(sample(text, "lp_calls_total"), 3.0)

    def test_a_series_keeps_its_last_1000_values_oldest_first(self):
        returns = metrics.series("episode_return")
        for i in range(2500):
            returns.record(i)
        figures = self.serve().metrics()
        values = [v for _, v in figures["series"]["episode_return"]]
        self.assertEqual(values, [float(i) for i in range(1500, 2500)])
        self.assertEqual(metrics.SERIES_CAPACITY, 1000)

    def test_an_empty_series_is_in_json_and_not_in_prometheus(self):
        metrics.series("later")
        server = self.serve()
        self.assertEqual(server.metrics()["series"], {"later": []})
        self.assertNotIn("later", server.prometheus().decode())

    def test_values_that_are_not_finite(self):
        metrics.gauge("nan_gauge").set(math.nan)
        metrics.gauge("far").set(-math.inf)
        metrics.series("lost").record(math.inf)
        server = self.serve()
        figures, text, _ = scrape(server.url)  # JSON has no NaN: null, as the C++ node writes
        self.assertEqual(figures["gauges"], {"far": None, "nan_gauge": None})
        self.assertEqual(figures["series"]["lost"][0][1], None)
        self.assertIn('nan_gauge{node="learner"} nan\n', text)
        self.assertIn('far{node="learner"} -inf\n', text)
        self.assertIn('lost{node="learner"} inf\n', text)

    def test_numbers_of_every_kind_are_floats(self):
        metrics.counter("c").add(True)
        metrics.counter("c").add(2)
        metrics.gauge("g").set(10**20)
        try:
            import numpy as np
        except ImportError:
            pass
        else:
            metrics.counter("c").add(np.int64(3))
            metrics.series("s").record(np.float32(0.5))
        figures = self.serve().metrics()
        self.assertIsInstance(figures["counters"]["c"], float)
        self.assertEqual(figures["gauges"]["g"], 1e20)
        self.assertIsInstance(figures["gauges"]["g"], float)

    def test_outside_a_node_they_record(self):
        # No server: the figures are kept, and a node served later shows them.
        episodes = metrics.counter("episodes")
        episodes.add()
        episodes.add(2)
        metrics.gauge("size").set(5)
        metrics.series("r").record(1.5)
        self.assertEqual(episodes.value(), 3.0)
        self.assertEqual(metrics.counter("episodes").value(), 3.0)
        self.assertEqual(metrics.gauge("size").value(), 5.0)
        figures = self.serve().metrics()
        self.assertEqual(figures["counters"], {"episodes": 3.0})
        self.assertEqual([v for _, v in figures["series"]["r"]], [1.5])

    def test_a_node_label_is_escaped_in_prometheus(self):
        metrics.gauge("g").set(1)
        text = self.serve(node='a"b\\c').prometheus().decode()
        self.assertIn('g{node="a\\"b\\\\c"} 1\n', text)
        self.assertIn('lp_process_threads{node="a\\"b\\\\c"} ', text)

    def test_the_package_exports_them(self):
        self.assertIs(lp.metrics, metrics)
        self.assertIn("metrics", lp.__all__)
        lp.metrics.counter("exported").add()
        self.assertEqual(metrics.counter("exported").value(), 1.0)


class Threads(FreshRegistry):
    def test_many_threads_count_every_add(self):
        threads, adds = 8, 2000
        server = self.serve()
        start = threading.Barrier(threads + 1)
        scrapes, failures = [], []

        def worker(i):
            kept = metrics.counter("hits")  # kept, and looked up each time below
            start.wait()
            try:
                for k in range(adds):
                    kept.add()
                    metrics.counter("looked_up").add(0.5)
                    metrics.gauge(f"worker_{i}").set(k)
                    metrics.series("shared").record(i)
            except Exception as e:  # pragma: no cover - reported below
                failures.append(e)

        def scraper():
            while any(t.is_alive() for t in workers):
                scrapes.append(server.metrics())
                server.prometheus()

        workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in workers:
            t.start()
        reader = threading.Thread(target=scraper)
        reader.start()
        start.wait()
        for t in workers:
            t.join(60)
        reader.join(60)
        self.assertEqual(failures, [])
        figures, text, _ = scrape(server.url)
        self.assertEqual(figures["counters"], {"hits": threads * adds,
                                               "looked_up": threads * adds * 0.5})
        self.assertEqual(sample(text, "hits_total"), threads * adds)
        self.assertEqual(figures["gauges"], {f"worker_{i}": adds - 1.0 for i in range(threads)})
        shared = figures["series"]["shared"]
        self.assertEqual(len(shared), metrics.SERIES_CAPACITY)
        self.assertEqual([t for t, _ in shared], sorted(t for t, _ in shared))
        self.assertTrue(all(scrape["counters"].get("hits", 0) <= threads * adds
                            for scrape in scrapes))
        counts = [scrape["counters"].get("hits", 0) for scrape in scrapes]
        self.assertEqual(counts, sorted(counts))  # a counter only goes up, as scraped too

    def test_threads_that_make_one_name_at_once_share_its_figure(self):
        threads = 16
        start = threading.Barrier(threads)

        def make():
            start.wait()
            metrics.counter("made_at_once").add()

        workers = [threading.Thread(target=make) for _ in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(30)
        self.assertEqual(metrics.counter("made_at_once").value(), threads)

    def test_calls_on_many_threads_record_into_one_node(self):
        class Concurrent:
            lp_concurrent_handlers = True
            step = Served.step

        server = self.serve(Concurrent())
        node = lp.connect(server.url, secret=SECRET)
        self.addCleanup(node.close)
        calls = [threading.Thread(target=lambda: [node.step(1.0) for _ in range(50)])
                 for _ in range(4)]
        for t in calls:
            t.start()
        for t in calls:
            t.join(60)
        figures = server.metrics()
        self.assertEqual(figures["counters"]["episodes"], 200)
        self.assertEqual(len(figures["series"]["episode_return"]), 200)


class BadUse(FreshRegistry):
    def assert_refused(self, make, error, *fragments):
        with self.assertRaises(error) as caught:
            make()
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))
        return str(caught.exception)

    def test_bad_names_say_which_rule_they_break(self):
        rule = "(Prometheus's rule: [a-zA-Z_][a-zA-Z0-9_]*)"
        for make, name, what in [
                (metrics.counter, "2fast", "a metric name starts with a letter or _ " + rule),
                (metrics.gauge, "with space", "a metric name holds only letters, digits and _ " + rule),
                (metrics.series, "x-y", "a metric name holds only letters, digits and _ " + rule),
                (metrics.gauge, "é", "a metric name starts with a letter or _"),
                (metrics.gauge, "", "a metric name cannot be empty"),
                (metrics.counter, "lp_calls",
                 "names that start with lp_ or __ are kept for the library and Prometheus"),
                (metrics.series, "__x", "kept for the library and Prometheus"),
                (metrics.counter, "a" * 101, "a metric name has at most 100 characters")]:
            with self.subTest(name=name):
                message = self.assert_refused(lambda: make(name), ValueError, what)
                self.assertTrue(message.startswith(
                    f'launchpad_client.metrics.{make.__name__}("{name[:80]}"): '), message)
        metrics.counter("a" * 100).add()  # the longest name
        metrics.gauge("_x9").set(1)
        self.assert_refused(lambda: metrics.gauge(3), TypeError, "a metric name is a str")

    def test_a_counter_only_goes_up(self):
        episodes = metrics.counter("episodes")
        episodes.add(2)
        message = self.assert_refused(lambda: episodes.add(-1), ValueError, "a counter only goes up",
                                      "use launchpad_client.metrics.gauge for a figure that goes down")
        self.assertTrue(message.startswith('launchpad_client.metrics.counter("episodes").add(-1): '),
                        message)
        self.assert_refused(lambda: episodes.add(math.nan), ValueError, "a counter only goes up")
        self.assertEqual(episodes.value(), 2.0)  # a refused amount is not added
        episodes.add(0)

    def test_a_name_has_one_kind(self):
        metrics.counter("episodes").add()
        self.assert_refused(lambda: metrics.gauge("episodes"), ValueError,
                            'launchpad_client.metrics.gauge("episodes"): this node already has a '
                            "counter of that name; a metric name has one kind",
                            'use launchpad_client.metrics.counter("episodes"), or another name')
        self.assert_refused(lambda: metrics.series("episodes"), ValueError, "already has a counter")
        metrics.series("r")
        self.assert_refused(lambda: metrics.counter("r"), ValueError, "already has a series")

    def test_values_that_are_not_numbers(self):
        self.assert_refused(lambda: metrics.gauge("g").set("3"), TypeError,
                            "launchpad_client.metrics.gauge(\"g\").set('3'): '3' is a str, not a number")
        self.assert_refused(lambda: metrics.series("s").record(None), TypeError, "not a number")
        self.assert_refused(lambda: metrics.counter("c").add([1]), TypeError, "not a number")
        self.assert_refused(lambda: metrics.gauge("g").set(10**400), ValueError,
                            "beyond a float's range")
        self.assertEqual(self.serve().metrics()["series"], {"s": []})


class CallFigures(FreshRegistry):
    """The node's own figures of its calls: lp_call_duration_seconds and
    method="(none)"."""

    def test_the_histogram_of_a_node_that_served_n_calls(self):
        class Napper:
            def nap(self, seconds: float) -> float:
                time.sleep(seconds)
                return seconds

        server = self.serve(Napper())
        quick, slow, nap = 15, 5, 0.03
        with lp.connect(server.url, secret=SECRET) as node:
            began = time.perf_counter()
            for seconds in [0.0] * quick + [nap] * slow:
                node.nap(seconds)
        wait_counted(server)
        took = time.perf_counter() - began
        figures, text, _ = scrape(server.url)
        buckets, total, count = histogram(text, "nap")
        n = quick + slow
        les = [le for le, _ in buckets]
        self.assertEqual(les, [le for le, _ in histogram(CPP_CALLS_TEXT, "ping")[0]])
        self.assertEqual(les[-1], "+Inf")
        self.assertEqual([float(le) for le in les[:-1]], list(figures["latency_bounds"]))
        values = [float(v) for _, v in buckets]
        self.assertEqual(values, sorted(values))  # cumulative: never down
        self.assertEqual((values[-1], float(count)), (n, n))
        self.assertEqual(values, figures["methods"][0]["latency_buckets"])  # as the JSON has them
        under = dict(zip(les, values))
        self.assertLessEqual(under["0.025000000000000001"], quick)  # each nap took over 0.03 s
        self.assertEqual(under["10"], n)
        # The calls' total time: at least what they slept, at most what the
        # caller waited; between the fastest and the slowest call's, n times.
        total = float(total)
        self.assertGreaterEqual(total, slow * nap)
        self.assertLessEqual(total, took)
        method = figures["methods"][0]
        self.assertLessEqual(method["fastest"] * n, total * (1 + 1e-9))
        self.assertGreaterEqual(method["slowest"] * n, total * (1 - 1e-9))
        self.assertNotIn("latency_sum", method)  # a key the C++ JSON lacks
        # A running sum: the next calls add to it.
        with lp.connect(server.url, secret=SECRET) as node:
            node.nap(nap)
        wait_counted(server)
        later = histogram(scrape(server.url)[1], "nap")
        self.assertEqual(later[2], str(n + 1))
        self.assertGreaterEqual(float(later[1]), total + nap)

    def test_calls_without_the_secret_count_as_401_as_a_cpp_node_counts_them(self):
        """Under the method called, or "(none)" for a name the node lacks,
        with no bytes: a C++ node reads no body it refuses so."""
        server = self.serve()
        for path in ("/lp/v1/call/step", "/lp/v1/call/nope"):
            for auth in ({}, {"Authorization": "Bearer wrong"}):
                status, _, reply = get(server.url, path,
                                       {"Content-Type": "application/json", **auth}, "POST",
                                       b"[1.0]")
                self.assertEqual((status, json.loads(reply)["error"]["code"]),
                                 (401, "unauthenticated"))
        wait_counted(server)
        figures, text, _ = scrape(server.url)
        self.assertEqual([m["name"] for m in figures["methods"]], ["step", "(none)"])
        for method in figures["methods"]:
            self.assertEqual((method["calls"], method["by_code"], method["in_flight"],
                              method["request_bytes"], method["reply_bytes"]),
                             (2, {"401": 2}, 0, 0, 0))
        for method in ("step", "(none)"):
            self.assertIn(f'lp_calls_total{{node="learner",method="{method}",code="401"}} 2\n',
                          text)

    def test_calls_to_a_method_the_node_lacks_count_under_none(self):
        server = self.serve()
        with lp.connect(server.url, secret=SECRET) as node:
            node.step(1.0)
        wait_counted(server)
        figures, text, _ = scrape(server.url)
        self.assertNotIn("(none)", text)  # not before such a call
        self.assertEqual([m["name"] for m in figures["methods"]], ["step"])
        replies = [call_missing(server.url, body) for body in (b"[]", b"[1, 2]")]
        for status, reply in replies:
            self.assertEqual((status, json.loads(reply)["error"]["code"]), (404, "no_such_method"))
        figures, text, _ = scrape(server.url)
        none = figures["methods"][-1]
        self.assertEqual(none["name"], "(none)")
        self.assertEqual((none["calls"], none["by_code"], none["in_flight"]), (2, {"404": 2}, 0))
        self.assertEqual(none["request_bytes"], len(b"[]") + len(b"[1, 2]"))
        self.assertEqual(none["reply_bytes"], sum(len(reply.encode()) for _, reply in replies))
        labels = 'node="learner",method="(none)"'
        self.assertIn(f'lp_calls_total{{{labels},code="404"}} 2\n', text)
        self.assertIn(f'lp_call_duration_seconds_bucket{{{labels},le="+Inf"}} 2\n', text)
        self.assertIn(f"lp_call_duration_seconds_count{{{labels}}} 2\n", text)
        self.assertIn(f"lp_calls_in_flight{{{labels}}} 0\n", text)
        self.assertIn(f"lp_call_request_bytes_total{{{labels}}} {none['request_bytes']}\n", text)
        self.assertIn(f"lp_call_reply_bytes_total{{{labels}}} {none['reply_bytes']}\n", text)
        self.assertEqual(sample(text, "lp_calls_total"), 1.0)  # step's own, apart
        # A call to nothing is no method's: step's figures did not move.
        self.assertEqual(figures["methods"][0]["calls"], 1)

    def test_a_node_without_methods_shows_none_from_the_start(self):
        class Quiet:
            def run(self):
                pass

        server = self.serve(Quiet())
        figures, text, _ = scrape(server.url)
        self.assertEqual(figures["methods"], [])  # the JSON, as C++'s: once called
        labels = 'node="learner",method="(none)"'
        ours = calls_text(text)
        self.assertIn(f'lp_calls_total{{{labels},code="404"}} 0\n', ours)
        buckets, total, count = histogram(ours, "(none)")
        self.assertEqual([v for _, v in buckets], ["0"] * (len(figures["latency_bounds"]) + 1))
        self.assertEqual((total, count), ("0", "0"))
        for family in ("lp_calls_in_flight", "lp_call_request_bytes_total",
                       "lp_call_reply_bytes_total"):
            self.assertIn(f"{family}{{{labels}}} 0\n", ours)
        self.assertNotIn("method=\"run\"", ours)


class SameAsCpp(FreshRegistry):
    """The Python node's output against a C++ node's."""

    def test_user_figures_as_the_cpp_node_wrote_them(self):
        record_as_the_cpp_node()
        server = self.serve()
        figures, text, content_type = scrape(server.url)
        self.assertEqual(user_text(text), CPP_USER_TEXT)
        self.assertEqual(figures["counters"], CPP_USER_JSON["counters"])
        self.assertEqual(figures["gauges"], CPP_USER_JSON["gauges"])
        self.assertEqual({name: [v for _, v in points] for name, points in figures["series"].items()},
                         CPP_USER_JSON["series_values"])
        for points in figures["series"].values():
            for point in points:
                self.assertEqual(len(point), 2)
                self.assertIsInstance(point[0], float)
        self.assertEqual(content_type, CPP_TEXT_TYPE)

    def test_the_library_families_as_the_cpp_node_wrote_them(self):
        text = self.serve().prometheus().decode()
        ours = "".join(line + "\n" for line in text.splitlines() if line.startswith("# "))
        self.assertEqual(ours, CPP_LP_FAMILIES)

    def test_the_families_of_calls_as_the_cpp_node_wrote_them(self):
        server = self.serve(Recorder())
        status, _ = call_as_the_cpp_program(server)
        self.assertEqual(status, 404)
        ours = calls_text(scrape(server.url)[1])
        # Every line, label and number format alike (the le bounds as %.17g,
        # "+Inf" last, _sum and _count after each method's buckets, "(none)"
        # last in each family) ...
        self.assertEqual(shape(ours), shape(CPP_CALLS_TEXT))
        # ... and the counts, which are the calls' (the times and the bytes
        # are a run's).
        def counts(text):
            return [line for line in text.splitlines()
                    if line.startswith(("lp_calls_total", "lp_call_duration_seconds_count",
                                        "lp_calls_in_flight"))
                    or 'le="+Inf"' in line]
        self.assertEqual(counts(ours), counts(CPP_CALLS_TEXT))
        for method in ("record", "ping", "(none)"):
            buckets, total, count = histogram(ours, method)
            theirs = histogram(CPP_CALLS_TEXT, method)
            self.assertEqual([le for le, _ in buckets], [le for le, _ in theirs[0]])
            self.assertEqual(count, theirs[2])
            self.assertRegex(total, r"^\d\.\d+(e-\d\d)?$|^0$")  # %.17g, as C++ writes it

    def test_the_json_of_calls_to_a_missing_method_as_the_cpp_node_has_it(self):
        server = self.serve(Recorder())
        call_as_the_cpp_program(server)
        figures = scrape(server.url)[0]
        self.assertEqual([m["name"] for m in figures["methods"]], ["record", "ping", "(none)"])
        none = figures["methods"][-1]
        self.assertEqual(set(none), CPP_METHOD_KEYS)
        self.assertEqual((none["calls"], none["by_code"], none["in_flight"], none["batches"]),
                         (1, {"404": 1}, 0, 0))
        self.assertEqual(none["latency_buckets"][-1], 1)

    def test_the_json_has_the_cpp_node_keys(self):
        server = self.serve()
        with lp.connect(server.url, secret=SECRET) as node:
            node.step(1.0)
        figures = scrape(server.url)[0]
        self.assertEqual(set(figures), CPP_JSON_KEYS)
        self.assertEqual(set(figures["methods"][0]), CPP_METHOD_KEYS)
        buckets = figures["methods"][0]["latency_buckets"]
        self.assertEqual(len(buckets), len(figures["latency_bounds"]) + 1)  # and +Inf, as C++'s
        self.assertEqual(buckets[-1], figures["methods"][0]["calls"])


class SameAsLiveCpp(FreshRegistry):
    """The nodes of the actor_learner example record figures of their own
    (lp::metrics in its actors and its replay node): each as the Python node
    writes the same names and values."""

    def setUp(self):
        super().setUp()
        if not ACTOR_LEARNER or not os.access(ACTOR_LEARNER, os.X_OK):
            self.skipTest(f"LP_EXAMPLE_ACTOR_LEARNER does not name a built program "
                          f"({ACTOR_LEARNER!r}); the C++ output recorded in this file is compared "
                          "instead (SameAsCpp)")

    def scrape_while_it_learns(self):
        """(label, JSON, text) of an actor and the replay node, each with
        figures of its own, read before the program ends by itself."""
        launched = Launched([ACTOR_LEARNER, "--lp_launch=local_mp"])
        self.addCleanup(launched.stop)
        run_dir = launched.run_dir()
        self.addCleanup(shutil.rmtree, run_dir, True)
        prog = lp.attach(run_dir, wait_for=["replay", "actors/0"], startup_timeout=STARTUP)
        self.addCleanup(prog.close)
        secret = lp.read_secret(run_dir)
        found = {}
        give_up = time.monotonic() + 60
        while len(found) < 2 and time.monotonic() < give_up:
            for label, wanted in (("actors/0", "series"), ("replay", "gauges")):
                try:
                    figures, text, _ = scrape(prog[label].url, secret)
                except (OSError, ValueError, AssertionError):
                    continue  # stopping: the next launch's turn, below
                if figures[wanted] and (wanted != "series" or any(figures[wanted].values())):
                    found[label] = (figures, text)
            if launched.process.poll() is not None:
                break
            time.sleep(0.01)
        return found

    def test_user_figures_of_live_cpp_nodes(self):
        found = {}
        for _ in range(3):  # it may learn before the figures are read; launched again then
            found = self.scrape_while_it_learns()
            if len(found) == 2:
                break
        self.assertEqual(sorted(found), ["actors/0", "replay"],
                         "actor_learner ended before its nodes' figures could be read, 3 times")
        for label, (figures, text) in found.items():
            with self.subTest(node=label):
                self.compare(label, figures, text)

    def compare(self, label, cpp_figures, cpp_text):
        self.assertTrue(user_text(cpp_text), f"{label} wrote no figure of its own:\n{cpp_text}")
        # The text: each family recorded again here with its value, written alike.
        with mock.patch.object(metrics, "_registry", metrics._Registry()):
            for name, lines in families(user_text(cpp_text)).items():
                kind, figure = re.fullmatch(r'# HELP \S+ (?:The last value of )?'
                                            r'lp::metrics::(counter|gauge|series)\("(\w+)"\)',
                                            lines[0]).groups()
                value = float(lines[2].rsplit(" ", 1)[1])
                {"counter": lambda: metrics.counter(figure).add(value),
                 "gauge": lambda: metrics.gauge(figure).set(value),
                 "series": lambda: metrics.series(figure).record(value)}[kind]()
            node = label.replace("\\", "\\\\").replace('"', '\\"')
            self.assertEqual(metrics._registry.prometheus(node), user_text(cpp_text))
        # The JSON: the same figures give the same values, series as [time, value].
        with mock.patch.object(metrics, "_registry", metrics._Registry()):
            for name, value in cpp_figures["counters"].items():
                metrics.counter(name).add(value)
            for name, value in cpp_figures["gauges"].items():
                metrics.gauge(name).set(math.nan if value is None else value)
            for name, points in cpp_figures["series"].items():
                kept = metrics.series(name)
                for _, value in points:
                    kept.record(math.nan if value is None else value)
            ours = metrics._registry.figures()
        self.assertEqual(ours["counters"], cpp_figures["counters"])
        self.assertEqual(ours["gauges"], cpp_figures["gauges"])
        self.assertEqual({n: [v for _, v in p] for n, p in ours["series"].items()},
                         {n: [v for _, v in p] for n, p in cpp_figures["series"].items()})
        for name, points in cpp_figures["series"].items():
            self.assertTrue(all(isinstance(p, list) and len(p) == 2 for p in points), name)
        self.assertEqual(set(cpp_figures), CPP_JSON_KEYS)


if __name__ == "__main__":
    unittest.main()
