"""What a Python node's own code asks of its program, as a C++ node asks
`lp::stop()` and `lp::stop_requested()`: `launchpad_client.stop()` and
`launchpad_client.stop_requested()`. The runtime (runtime.py) connects them
to the node's host; outside a node they do nothing and say False."""

import threading

_control = None  # the pipe to the node's host, set by the runtime
_lock = threading.Lock()
_stopping = threading.Event()


def connect(stream):
    global _control
    _control = stream


def tell(line):
    """Writes one line to the node's host (runtime.py lists them)."""
    with _lock:
        if _control is not None:
            try:
                _control.write(line + "\n")
                _control.flush()
            except OSError:
                pass


def stop():
    """Asks the whole program to stop, as lp::stop() does in a C++ node."""
    tell("stop")


def stop_requested():
    """True once the program stops: a run() loop should return then."""
    return _stopping.is_set()


def set_stopping():
    _stopping.set()
