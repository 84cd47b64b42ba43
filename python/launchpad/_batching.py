"""lp.batched_handler: calls to a node's method grouped into batches, as
Courier's batched handlers group them. The node serves the wrapper like any
method (its calls run concurrently, each on its connection's thread); each
call joins the batch being gathered and waits for its own part of the
batch's result.

A batch runs when it holds `batch_size` calls, or `timeout` after its first
call came, whichever is first; at most `max_parallelism` batches run at
once (a batch ready beyond that waits, and gathers calls while it waits).
The method is called once per batch with each argument batched across the
calls (below), and returns one result for the whole batch, which is split
into one per call.

Batched as Courier batches them: ints, floats and bools (and 0-d arrays of
int64, float64 and bool) become a 1-d numpy array (int64, float64, bool);
numpy arrays and scalars are stacked along a new first axis; bytes become a
numpy array of objects; tuples and dicts are batched element by element,
key by key; lists, strings and None become a list of the calls' values.
Split: a tuple or a dict element by element, key by key; a list item by
item, an array along its first axis (each must hold one per call).
"""

from __future__ import annotations

import collections
import datetime
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from launchpad_client._packages import numpy as np

_Call = tuple[tuple[Any, ...], dict[str, Any]]
_SIMPLE = ({bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64)}
           if np is not None else {})


class BatchError(ValueError):
    """Calls that cannot be batched together, or a result that cannot be
    split into one per call."""


def batched_handler(batch_size: int, max_parallelism: int = 1,
                    timeout: datetime.timedelta | float = datetime.timedelta(milliseconds=200),
                    pad_batch: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorates a node's method so that `batch_size` calls run as one call
    of it, with batched arguments, returning a batched result (the module's
    doc says how values are batched and split). `timeout` (a timedelta, or
    seconds): how long a batch gathers calls before it runs anyway;
    `max_parallelism`: how many batches may run at once; `pad_batch`: fill a
    batch that the timeout ran with copies of its first call, so that every
    batch holds `batch_size`.

    As in Launchpad, wrap a bound method in the constructor rather than
    decorate it in the class: `self.step = lp.batched_handler(8)(self.step)`.
    A batched method holds a thread of its node for each call it gathers."""
    if np is None:
        raise ImportError("lp.batched_handler batches values into numpy arrays, and numpy is not "
                          "installed: apt-get install python3-numpy")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batched_handler's batch_size is a positive int, not {batch_size!r}")
    if not isinstance(max_parallelism, int) or max_parallelism < 1:
        raise ValueError(f"batched_handler's max_parallelism is a positive int, not "
                         f"{max_parallelism!r}")
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
    if not seconds >= 0:
        raise ValueError(f"batched_handler's timeout is not negative, not {timeout!r}")

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        parameters = inspect.getfullargspec(function).args
        if parameters and parameters[0] == "self" and not hasattr(function, "__self__"):
            raise TypeError(f"lp.batched_handler cannot decorate the method "
                            f"{function.__qualname__} in its class; wrap the bound method in "
                            f"the constructor: self.{function.__name__} = lp.batched_handler("
                            f"...)(self.{function.__name__})")
        batcher = _Batcher(function, batch_size, max_parallelism, seconds, pad_batch)

        @functools.wraps(function)
        def batched(*args: Any, **kwargs: Any) -> Any:
            return batcher.call(args, kwargs)

        return batched

    return decorate


class _Batch:
    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.enqueued = False  # full, or past its timeout: no caller starts it again
        self.ready = threading.Event()  # it may run (max_parallelism allows)
        self.executed = threading.Event()
        self.results: list[Any] = []
        self.error: BaseException | None = None


class _Batcher:
    """The batches of one batched method. Pickled (with the function, by
    cloudpickle) as its settings alone: a node's process gets fresh ones."""

    def __init__(self, function: Callable[..., Any], batch_size: int, max_parallelism: int,
                 timeout: float, pad_batch: bool) -> None:
        self._settings = (function, batch_size, max_parallelism, timeout, pad_batch)
        self._function, self._size, self._parallelism = function, batch_size, max_parallelism
        self._timeout, self._pad = timeout, pad_batch
        self._lock = threading.Lock()
        self._current = _Batch()
        self._running = 0
        self._waiting: collections.deque[_Batch] = collections.deque()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_Batcher, self._settings)

    def _enqueue(self, batch: _Batch) -> bool:
        """Under the lock: lets `batch` run now, or queues it; True if now."""
        batch.enqueued = True
        self._running += 1
        if self._running > self._parallelism:
            self._waiting.append(batch)
            return False
        batch.ready.set()
        return True

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        runs_it = False
        with self._lock:
            batch = self._current
            index = len(batch.calls)
            batch.calls.append((args, kwargs))
            if index == self._size - 1:
                self._current = _Batch()
                if not batch.enqueued:
                    self._enqueue(batch)
                    runs_it = True
        # The batch's first call keeps its time: past it, it runs the batch.
        if index == 0 and not runs_it and not batch.executed.wait(self._timeout):
            with self._lock:
                if not batch.enqueued:
                    if self._enqueue(batch):
                        self._current = _Batch()
                    runs_it = True
        if runs_it:
            batch.ready.wait()
            try:
                batch.results = self._run(batch.calls)
            except BaseException as e:  # every call of the batch gets it
                batch.error = e
            finally:
                batch.executed.set()
                with self._lock:
                    self._running -= 1
                    if self._waiting:
                        following = self._waiting.popleft()
                        following.ready.set()
                        if following is self._current:  # it gathered while it waited
                            self._current = _Batch()
        batch.executed.wait()
        if batch.error is not None:
            raise batch.error
        return batch.results[index]

    def _run(self, calls: list[_Call]) -> list[Any]:
        count = len(calls)
        if self._pad:
            calls = calls + [calls[0]] * (self._size - count)
        arity = len(calls[0][0])
        if any(len(args) != arity for args, _ in calls):
            raise BatchError("the calls of a batch do not have the same number of arguments: "
                             f"{sorted({len(args) for args, _ in calls})}")
        names = set(calls[0][1])
        if any(set(kwargs) != names for _, kwargs in calls):
            raise BatchError("the calls of a batch do not have the same keyword arguments")
        args = [_batched([c[0][i] for c in calls], f"argument {i + 1}") for i in range(arity)]
        kwargs = {n: _batched([c[1][n] for c in calls], f"keyword argument {n!r}") for n in names}
        result = self._function(*args, **kwargs)
        return _split(result, len(calls), "the result")[:count]


def _simple(value: Any) -> Any:
    """The dtype a value batches into as a simple value, or None."""
    if type(value) in _SIMPLE:
        return _SIMPLE[type(value)]
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype in _SIMPLE.values():
        return value.dtype
    return None


def _kind(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return np.ndarray
    return type(value)


def _batched(values: list[Any], where: str) -> Any:
    first = values[0]
    dtype = _simple(first)
    if dtype is not None:
        if any(_simple(v) != dtype for v in values):
            raise BatchError(f"{where} of the calls of a batch mixes types: "
                             f"{sorted({type(v).__name__ for v in values})}")
        try:
            return np.array(values, dtype=dtype)
        except OverflowError as e:
            raise BatchError(f"{where}: {e} (ints batch into int64)") from None
    kind = _kind(first)
    if any(_kind(v) is not kind for v in values):
        raise BatchError(f"{where} of the calls of a batch mixes types: "
                         f"{sorted({type(v).__name__ for v in values})}")
    if kind is tuple:
        if any(len(v) != len(first) for v in values):
            raise BatchError(f"{where}: the calls' tuples have different lengths")
        return tuple(_batched([v[i] for v in values], f"{where}[{i}]") for i in range(len(first)))
    if kind is dict:
        if any(v.keys() != first.keys() for v in values):
            raise BatchError(f"{where}: the calls' dicts have different keys")
        return {k: _batched([v[k] for v in values], f"{where}[{k!r}]") for k in first}
    if kind is np.ndarray:
        if any(v.dtype != first.dtype or v.shape != first.shape for v in values):
            raise BatchError(f"{where}: the calls' arrays differ in dtype or shape")
        return np.stack(values)
    if kind is bytes:
        batched = np.empty(len(values), dtype=object)
        batched[:] = values
        return batched
    return list(values)  # lists, strings, None


def _split(result: Any, count: int, where: str) -> list[Any]:
    if isinstance(result, tuple):
        parts = [_split(r, count, f"{where}[{i}]") for i, r in enumerate(result)]
        return [tuple(p[i] for p in parts) for i in range(count)]
    if isinstance(result, dict):
        split = {k: _split(v, count, f"{where}[{k!r}]") for k, v in result.items()}
        return [{k: v[i] for k, v in split.items()} for i in range(count)]
    if isinstance(result, list) or (isinstance(result, np.ndarray) and result.ndim > 0):
        if len(result) != count:
            raise BatchError(f"{where} of a batch of {count} calls holds {len(result)}, not one "
                             "per call")
        return list(result)
    raise BatchError(f"{where} of a batched method is of type {type(result).__name__}; it "
                     "returns one result per call: a list, or an array along its first axis (or "
                     "tuples and dicts of them)")
