"""`python3 -m launchpad_client.runtime SPEC`: one Python node of a program.

The process that hosts a Python node (its launch's node process, or the
launcher itself under the thread policies) starts this with the path of a
spec, a JSON file only its owner reads:

    {"node": "learner", "program": "demo", "service": "Learner",
     "module": "learner", "class": "Learner",
     "declared": [...],          # describe's "methods" of the C++ declaration
     "args": [...],              # the constructor's arguments, in JSON
     "arg_schemas": [...],       # their schemas; {"kind": "handle", ...} for a handle
     "run_dir": "/tmp/lp-demo-XXXXXX",   # the secret and TLS files, the nodes file
     "host": "127.0.0.1", "tls": false, "has_run": true}

and the environment variable LP_PYTHON_CONTROL_FD, a pipe to its host on
which it writes one line for each thing the host must know:

    serving <url>      the node serves (the host publishes the address)
    finished           run() returned
    stop               the node asked the program to stop (launchpad_client.stop())

Before anything serves it imports the module, finds the class and compares
its methods' type hints with the C++ declaration (hints.compare); each
failure ends the process with its own exit status and a message that says
what to do. On SIGTERM it stops taking calls, lets the running ones end,
and exits 0.
"""

import importlib
import json
import os
import signal
import sys
import ssl
import threading
import time
import traceback

from . import hints, node_context, run_directory
from .node import Node
from .schema import from_schema
from .server import NodeServer
from .tls import context_of_run_dir

# Exit statuses the host reads: failures that a restart cannot mend.
IMPORT_FAILED = 3
TYPES_DIFFER = 4
CONSTRUCTION_FAILED = 5

def _fail(status, label, message, tail=None):
    print(f"[lp] {label}: {message}", file=sys.stderr)
    if tail:
        print(tail.rstrip(), file=sys.stderr)
    sys.stderr.flush()
    os._exit(status)


def _last_lines(text, count=8):
    return "\n".join(text.rstrip().split("\n")[-count:])


def _import_class(spec):
    label, module_name, class_name = spec["node"], spec["module"], spec["class"]
    reproduce = (f"{sys.executable} -c 'import {module_name}; {module_name}.{class_name}'"
                 f" (with PYTHONPATH={os.environ.get('PYTHONPATH', '')!s})")
    try:
        module = importlib.import_module(module_name)
    except BaseException:
        _fail(IMPORT_FAILED, label, f"cannot import module {module_name!r} for the Python node; "
              f"to see why, run: {reproduce}", _last_lines(traceback.format_exc()))
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        found = sorted(n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_"))
        _fail(IMPORT_FAILED, label, f"module {module_name!r} ({getattr(module, '__file__', '?')}) "
              f"has no class {class_name!r}; its classes: {', '.join(found) or '(none)'}")
    return cls


def _arguments(spec):
    """The constructor's arguments: values decoded by their schemas, and a
    typed client of the node each handle names."""
    out = []
    for value, schema in zip(spec.get("args", []), spec.get("arg_schemas", [])):
        if schema.get("kind") == "handle":
            out.append(_Peer(spec, value))
        else:
            out.append(from_schema(schema).from_wire(value))
    return out


class _Peer:
    """A handle of another node: a typed client, connected on first use
    (the node may not serve yet when this one is built)."""

    def __init__(self, spec, label):
        self._spec, self._label = spec, label
        self._node = None
        self._lock = threading.Lock()

    def _connect(self):
        with self._lock:
            if self._node is None:
                run_dir = self._spec["run_dir"]
                give_up = time.monotonic() + 30
                while True:
                    url = run_directory.node_addresses(run_dir).get(self._label)
                    if url or time.monotonic() > give_up:
                        break
                    time.sleep(0.02)
                if not url:
                    raise LookupError(f"no address for node {self._label!r} in {run_dir}/nodes "
                                      "within 30 s")
                self._node = Node(url, run_directory.read_secret(run_dir), label=self._label,
                                  tls=context_of_run_dir(run_dir))
            return self._node

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._connect(), name)


def _server_tls(run_dir):
    certificate = os.path.join(run_dir, "tls.crt")
    ca = os.path.join(run_dir, "tls_ca.crt")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=ca if os.path.isfile(ca) else certificate)
    context.load_cert_chain(certificate, os.path.join(run_dir, "tls.key"))
    return context


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m launchpad_client.runtime SPEC (a launch starts it)", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    label = spec["node"]
    fd = os.environ.get("LP_PYTHON_CONTROL_FD")
    if fd is not None:
        node_context.connect(os.fdopen(int(fd), "w", buffering=1, closefd=True))

    cls = _import_class(spec)
    problems = hints.compare(spec.get("declared") or [], cls, node=label)
    if problems:
        _fail(TYPES_DIFFER, label, f"the Python class {spec['module']}.{spec['class']} does not "
              f"match the C++ declaration of {spec.get('service', cls.__name__)}:\n  "
              + "\n  ".join(problems))
    try:
        target = cls(*_arguments(spec))
    except BaseException:
        _fail(CONSTRUCTION_FAILED, label, f"{spec['class']}(...) raised",
              _last_lines(traceback.format_exc()))

    run_dir = spec.get("run_dir")
    secret = run_directory.read_secret(run_dir) if run_dir else None
    server = NodeServer(target, node=label, program=spec.get("program", ""), secret=secret,
                        declared=spec.get("declared"), service=spec.get("service"),
                        tls=_server_tls(run_dir) if spec.get("tls") else None,
                        host=spec.get("host", "127.0.0.1"))
    server.on_stop = node_context.stop
    ended = threading.Event()

    def on_term(signum, frame):
        node_context.set_stopping()
        ended.set()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    server.start()
    print(f"[lp] {label} serving at {server.url}", flush=True)
    node_context.tell(f"serving {server.url}")

    if spec.get("has_run") and callable(getattr(target, "run", None)):
        def run():
            try:
                target.run()
            except BaseException:
                _fail(1, label, "run() raised", _last_lines(traceback.format_exc()))
            node_context.tell("finished")
        threading.Thread(target=run, name=f"lp-{label}-run", daemon=True).start()

    while not ended.wait(1.0):
        pass
    server.drain()
    server.wait_idle(float(spec.get("termination_notice_s", 10)))
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
