"""Figures a Python node records about itself, as `lp::metrics` does in C++
(include/launchpad/metrics.hpp, docs/observability.md)::

    from launchpad_client import metrics

    metrics.counter("episodes").add(1)          # exported as episodes_total
    metrics.gauge("replay_size").set(n)         # replay_size
    metrics.series("episode_return").record(r)  # episode_return (its last value)

They are exported with the node's own figures at GET /lp/v1/metrics, in the
JSON the status page reads ("counters", "gauges", "series") and in the
Prometheus text, in the C++ node's shapes, names, types and help. A Python
node is one process, so the registry is the process's: a figure recorded
from any thread (run(), a method, the constructor, a thread of its own)
is the node's. Outside a node the calls record all the same; nothing
exports them.

A name follows Prometheus's rule, ``[a-zA-Z_][a-zA-Z0-9_]*``, has at most
100 characters, and does not start with ``lp_`` (the library's) or ``__``
(Prometheus's); a name has one kind. A bad name, a second kind for a name,
or a counter's negative amount raises ValueError saying what to do;
a value that is not a number raises TypeError. `counter(name)` looks the
name up under a lock: to record in a loop, keep what it returns.

Values are floats, as the C++ node's are doubles. A series keeps its last
1000 values, each with its time (seconds since the epoch); Prometheus sees
its last value, as a gauge.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from typing import Any, NoReturn

from ._node import progress

__all__ = ["counter", "gauge", "series", "Counter", "Gauge", "Series"]

# The values a series keeps: user_series::capacity in node_metrics.hpp.
SERIES_CAPACITY = 1000
MAX_NAME = 100

_COUNTER, _GAUGE, _SERIES = "counter", "gauge", "series"
_PREFIX = "launchpad_client.metrics."
_RULE = "(Prometheus's rule: [a-zA-Z_][a-zA-Z0-9_]*)"


def check_name(function: str, name: Any) -> None:
    """Raises ValueError naming the rule `name` breaks (metric_name.hpp's
    rules and words); TypeError if it is not a str."""
    if not isinstance(name, str):
        raise TypeError(f"{function}({name!r}): a metric name is a str, not {type(name).__name__}")

    def fail(rule: str) -> NoReturn:
        raise ValueError(f'{function}("{name[:80]}"): {rule}')

    if not name:
        fail("a metric name cannot be empty")
    if len(name) > MAX_NAME:
        fail(f"a metric name has at most {MAX_NAME} characters")
    if not _letter(name[0]):
        fail(f"a metric name starts with a letter or _ {_RULE}")
    if not all(_letter(c) or "0" <= c <= "9" for c in name):
        fail(f"a metric name holds only letters, digits and _ {_RULE}")
    if name.startswith(("lp_", "__")):
        fail("names that start with lp_ or __ are kept for the library and Prometheus")


def _letter(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z" or c == "_"


def _as_float(value: Any, kind: str, name: str, operation: str) -> float:
    """`value` as a float, as C++ takes a double: a bool, an int, a float, a
    numpy scalar; a str is not a number here."""
    if type(value) is float:  # the common case, at no more cost
        return value
    where = f'{_PREFIX}{kind}("{name}").{operation}({value!r})'
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"{where}: {value!r} is a {type(value).__name__}, not a number")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{where}: {value} is beyond a float's range") from None
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {value!r} is a {type(value).__name__}, not a number") from None


class _Figure:
    """A counter's or a gauge's value."""

    __slots__ = ("value", "lock")

    def __init__(self) -> None:
        self.value = 0.0
        self.lock = threading.Lock()


class _Series:
    """The last SERIES_CAPACITY values recorded, each with its time."""

    __slots__ = ("points_", "recorded", "lock")

    def __init__(self) -> None:
        self.points_: collections.deque[tuple[float, float]] = collections.deque(
            maxlen=SERIES_CAPACITY)
        self.recorded = 0
        self.lock = threading.Lock()

    def record(self, value: float) -> None:
        with self.lock:  # the time under the lock too: points in the order of their times
            self.points_.append((time.time(), value))
            self.recorded += 1

    def points(self) -> list[tuple[float, float]]:
        """Oldest first: [(time, value), ...]."""
        with self.lock:
            return list(self.points_)


class _Registry:
    """The figures of one node (of this process), by name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, Any]] = {}  # name -> (kind, _Figure or _Series)

    def entry(self, kind: str, name: str) -> Any:
        function = _PREFIX + kind
        check_name(function, name)
        with self._lock:
            held = self._entries.get(name)
            if held is None:
                held = self._entries[name] = (kind, _Series() if kind == _SERIES else _Figure())
        if held[0] != kind:
            raise ValueError(f'{function}("{name}"): this node already has a {held[0]} of that '
                             f"name; a metric name has one kind (use {_PREFIX}{held[0]}"
                             f'("{name}"), or another name for the {kind})')
        return held[1]

    def entries(self) -> list[tuple[str, str, Any]]:
        """[(name, kind, figure)], by name, as the C++ node's std::map orders them."""
        with self._lock:
            return [(name, kind, figure) for name, (kind, figure) in sorted(self._entries.items())]

    def figures(self) -> dict[str, dict[str, Any]]:
        """{"counters", "gauges", "series"} as the C++ node's metrics JSON
        has them (exposition.hpp): a value that is not finite as None (JSON's
        null, as nlohmann writes a NaN or an infinity), a series as
        [[time, value], ...], oldest first."""
        counters: dict[str, Any] = {}
        gauges: dict[str, Any] = {}
        series: dict[str, Any] = {}
        for name, kind, figure in self.entries():
            if kind == _COUNTER:
                counters[name] = _json_number(figure.value)
            elif kind == _GAUGE:
                gauges[name] = _json_number(figure.value)
            else:
                series[name] = [[t, _json_number(v)] for t, v in figure.points()]
        return {"counters": counters, "gauges": gauges, "series": series}

    def prometheus(self, node: str) -> str:
        """The user families in the text format, as the C++ node writes them:
        `node`, the node's label, escaped already."""
        out = []
        for name, kind, figure in self.entries():
            if kind == _COUNTER:
                exported = name if name.endswith("_total") else name + "_total"
                value, help_text, type_ = figure.value, f'lp::metrics::counter("{name}")', "counter"
            elif kind == _GAUGE:
                exported, value, type_ = name, figure.value, "gauge"
                help_text = f'lp::metrics::gauge("{name}")'
            else:
                points = figure.points()
                if not points:
                    continue
                exported, value, type_ = name, points[-1][1], "gauge"
                help_text = f'The last value of lp::metrics::series("{name}")'
            out.append(f"# HELP {exported} {help_text}\n# TYPE {exported} {type_}\n"
                       f'{exported}{{node="{node}"}} {prometheus_number(value)}\n')
        return "".join(out)


def _json_number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def prometheus_number(value: float) -> str:
    """A sample's value as the C++ node writes it (printf's %.17g)."""
    return "%.17g" % value


class Counter:
    """A count that only goes up (Prometheus's counter; exported as
    <name>_total, or <name> if it ends in _total)."""

    __slots__ = ("name", "_figure")

    def __init__(self, name: str) -> None:
        self._figure = _registry.entry(_COUNTER, name)
        self.name = name

    def add(self, n: float = 1) -> None:
        """Adds `n` (at least 0) to the count."""
        amount = _as_float(n, _COUNTER, self.name, "add")
        if not amount >= 0:  # NaN too, as in C++
            raise ValueError(f'{_PREFIX}counter("{self.name}").add({n!r}): a counter only goes '
                             f"up; use {_PREFIX}gauge for a figure that goes down")
        with self._figure.lock:
            self._figure.value += amount
        progress.sign()

    def value(self) -> float:
        """The count so far."""
        value: float = self._figure.value
        return value


class Gauge:
    """A figure that goes up and down: its last value is exported."""

    __slots__ = ("name", "_figure")

    def __init__(self, name: str) -> None:
        self._figure = _registry.entry(_GAUGE, name)
        self.name = name

    def set(self, v: float) -> None:
        """Makes `v` the gauge's value."""
        self._figure.value = _as_float(v, _GAUGE, self.name, "set")
        progress.sign()

    def value(self) -> float:
        """The gauge's last value."""
        value: float = self._figure.value
        return value


class Series:
    """Values over time: the node keeps its last 1000 with their times for
    the status page's plots; Prometheus sees the last one, as a gauge."""

    __slots__ = ("name", "_series")

    def __init__(self, name: str) -> None:
        self._series = _registry.entry(_SERIES, name)
        self.name = name

    def record(self, v: float) -> None:
        """Records `v` now."""
        self._series.record(_as_float(v, _SERIES, self.name, "record"))
        progress.sign()


def counter(name: str) -> Counter:
    """The node's counter `name`, made on first use."""
    return Counter(name)


def gauge(name: str) -> Gauge:
    """The node's gauge `name`, made on first use."""
    return Gauge(name)


def series(name: str) -> Series:
    """The node's series `name`, made on first use."""
    return Series(name)


# The process's figures: NodeServer exports them. Looked up at each use, so
# that a test may put a fresh one in its place.
_registry = _Registry()
