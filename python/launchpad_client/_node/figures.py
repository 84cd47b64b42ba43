"""What a Python node counts of its calls, and its figures as a C++ node
exports them: the metrics JSON the status page reads and the Prometheus
text (include/launchpad/detail/observe/, whose names, help, buckets and
statuses protocol.toml holds for both)."""

from __future__ import annotations

import os
from typing import Any

from .. import _protocol as protocol
from .. import metrics as user_metrics

# Upper bounds of the latency buckets, in seconds: the C++ node's, so that
# the status page reads both alike.
LATENCY_BOUNDS = protocol.CALLS_LATENCY_BOUNDS
# The order of a method's codes in lp_calls_total, as the C++ node's
# call_statuses; any other is counted as OTHER.
_CALL_STATUSES = tuple(str(status) for status in protocol.CALLS_STATUSES)
OTHER = protocol.CALLS_OTHER_STATUS
NONE = protocol.CALLS_UNKNOWN_METHOD  # the method label of calls to a name the node lacks


class MethodFigures:
    """What a node counts of the calls to one of its methods (or, as
    "(none)", to a method it lacks), as call_figures in
    detail/observe/call_metrics.hpp: `buckets` per latency bound, not
    cumulative, without the calls over the last bound (`calls` counts those
    too); `seconds`, the calls' total time, the histogram's _sum."""

    def __init__(self) -> None:
        self.calls = 0
        self.by_code: dict[str, int] = {}
        self.buckets = [0] * len(LATENCY_BOUNDS)
        self.seconds = 0.0
        self.fastest: float | None = None
        self.slowest: float | None = None
        self.in_flight = 0
        self.request_bytes = 0
        self.reply_bytes = 0

    def record(self, status: int, seconds: float, request_bytes: int, reply_bytes: int) -> None:
        self.calls += 1
        key = str(status)
        self.by_code[key] = self.by_code.get(key, 0) + 1
        for i, bound in enumerate(LATENCY_BOUNDS):
            if seconds <= bound:
                self.buckets[i] += 1
                break
        self.seconds += seconds
        self.fastest = seconds if self.fastest is None else min(self.fastest, seconds)
        self.slowest = seconds if self.slowest is None else max(self.slowest, seconds)
        self.request_bytes += request_bytes
        self.reply_bytes += reply_bytes


def cumulative(buckets: list[int]) -> list[int]:
    out: list[int] = []
    total = 0
    for b in buckets:
        total += b
        out.append(total)
    return out


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def label_value(value: str) -> str:
    """A label value between the quotes: \\, " and newline escaped, as the
    text format asks (prometheus_label_value in exposition.hpp)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(figures: dict[str, Any], node: str) -> str:
    """The node's own families from its metrics JSON (`figures`, with each
    method's "latency_sum": metrics(sums=True)), in the C++ node's names,
    types, help, order and numbers (printf's %.17g); `node`, the label,
    escaped.

    lp_call_duration_seconds is the C++ node's histogram: per method a
    cumulative _bucket for each bound of LATENCY_BOUNDS and +Inf, _sum (the
    calls' total time, seconds) and _count. Calls to a method the node lacks
    are method="(none)", last, once there is one; a node with no method
    shows "(none)" at 0 from the start, as C++ does, so that a scrape finds
    every node in every family of calls. Not written, for want of the
    figure: lp_batch_size (a Python node does not batch)."""
    out: list[str] = []

    def family(row: protocol.MetricFamily) -> None:
        out.append(f"# HELP {row.name} {row.help}\n# TYPE {row.name} {row.type}\n")

    def sample(name: str, extra: str, value: float) -> None:
        labels = f'node="{node}"' + (f",{extra}" if extra else "")
        out.append(f"{name}{{{labels}}} {user_metrics.prometheus_number(value)}\n")

    methods = [(label_value(m["name"]), m) for m in figures["methods"]]
    if not methods:
        none = len(LATENCY_BOUNDS) + 1
        methods = [(NONE, {"name": NONE, "calls": 0, "by_code": {},
                           "latency_buckets": [0] * none, "latency_sum": 0.0,
                           "in_flight": 0, "request_bytes": 0, "reply_bytes": 0})]
    calls = protocol.METRIC_CALLS_TOTAL
    family(calls)
    for name, m in methods:
        by_code: dict[str, int] = {}
        for code, count in m["by_code"].items():
            code = code if code in _CALL_STATUSES else OTHER
            by_code[code] = by_code.get(code, 0) + count
        # Every method shows its 200s, at 0 too, and "(none)" its 404s, which
        # is all it answers; other codes once seen.
        shown_at_zero = "404" if m["name"] == NONE else "200"
        for code in _CALL_STATUSES + (OTHER,):
            if by_code.get(code) or code == shown_at_zero:
                sample(calls.name, f'method="{name}",code="{code}"', by_code.get(code, 0))
    duration = protocol.METRIC_CALL_DURATION_SECONDS
    family(duration)
    les = [user_metrics.prometheus_number(bound) for bound in LATENCY_BOUNDS] + ["+Inf"]
    for name, m in methods:
        for le, count in zip(les, m["latency_buckets"], strict=True):
            sample(f"{duration.name}_bucket", f'method="{name}",le="{le}"', count)
        sample(f"{duration.name}_sum", f'method="{name}"', m["latency_sum"])
        sample(f"{duration.name}_count", f'method="{name}"', m["latency_buckets"][-1])
    for row, key in ((protocol.METRIC_CALLS_IN_FLIGHT, "in_flight"),
                     (protocol.METRIC_CALL_REQUEST_BYTES_TOTAL, "request_bytes"),
                     (protocol.METRIC_CALL_REPLY_BYTES_TOTAL, "reply_bytes")):
        family(row)
        for name, m in methods:
            sample(row.name, f'method="{name}"', m[key])
    for row, key in ((protocol.METRIC_PROCESS_RESIDENT_MEMORY_BYTES, "resident_bytes"),
                     (protocol.METRIC_PROCESS_CPU_SECONDS_TOTAL, "cpu_seconds"),
                     (protocol.METRIC_PROCESS_THREADS, "threads"),
                     (protocol.METRIC_OPEN_CONNECTIONS, "connections"),
                     (protocol.METRIC_RESTARTS_TOTAL, "restarts")):
        family(row)
        sample(row.name, "", figures[key])
    for row, key in ((protocol.METRIC_SHARED_MEMORY_BYTES, "bytes"),
                     (protocol.METRIC_SHARED_MEMORY_MESSAGES_TOTAL, "messages"),
                     (protocol.METRIC_SHARED_MEMORY_FALLBACKS_TOTAL, "fallbacks"),
                     (protocol.METRIC_SHARED_MEMORY_KEPT_TOTAL, "kept")):
        family(row)
        sample(row.name, "", figures["shared_memory"][key])
    return "".join(out)
