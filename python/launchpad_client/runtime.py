"""One Python node of a program:

    python3 -m launchpad_client.runtime [--check] --node=PROGRAM/LABEL
    python3 -m launchpad_client.runtime [--check] SPEC

(`--check` only imports the class and compares it with its C++
declaration, with the exit statuses below: a launch of processes does that
for every Python node before it starts any.)

The process that hosts a Python node (its launch's node process, or the
launcher itself under the thread policies) starts the first form, with the
environment variable LP_PYTHON_CONTROL_FD: one end of a connected AF_UNIX
stream socket (socketpair) to its host. `--node` only names the node for
`ps`. The host sends the spec first, over that socket: a line
`spec <J> <C>`, then J bytes of JSON, the spec, then C bytes of CBOR, the
constructor's arguments (an array; tensors stay binary). Nothing of it is
written to a file: the spec holds the launch's secret and TLS key, which
are in the launch's run directory and nowhere else. By hand, the second
form reads the spec from a JSON file, with the arguments in it ("args") and
no host:

    {"node": "learner", "program": "demo", "service": "Learner",
     "module": "learner", "class": "Learner",
     "declared": [...],          # describe's "methods" of the C++ declaration
     "args": [...],              # by hand: the constructor's arguments, in JSON
     "arg_schemas": [...],       # their schemas; {"kind": "handle"} for a handle's label,
                                 # {"kind": "handles"} for a list of labels
     "secret": "0f3c...",        # the launch's secret; absent: --lp_insecure
     "tls": {"certificate": PEM, "key": PEM, "authority": PEM},  # absent: plain HTTP
     "run_dir": "/tmp/lp-demo-XXXXXX",   # by hand: its nodes file finds the handles' nodes
     "host": "127.0.0.1",
     "socket": "/tmp/lp-demo-XXXXXX/sockets/learner.sock",  # serve there too (optional)
     "has_run": true,            # C++ declares `void run();`
     "termination_notice_s": 10, # how long calls that run at a stop may take (optional)
     "max_body_bytes": 268435456,  # the largest request body it reads (optional)
     "shared_memory_bytes": 268435456,  # its shared memory's cap; 0: none (optional)
     "health_timeout_ms": 60000, # its group's health_timeout where its host watches
                                 # health (a launcher's node process); optional
     "checkpoint": {"save": "/ckpt/learner.ckpt", "restore": "/ckpt/learner.ckpt" or null,
                    "interval_ms": 30000},   # optional; 0: saved at stop only
     "launchpad_node": true}     # a Launchpad program's node (python/launchpad/): no
                                 # declaration, untyped methods; the CBOR is one byte
                                 # string, its definition, cloudpickled (optional)

After the spec, the control socket carries lines of UTF-8 text both ways.
The node writes:

    serving <url>      the node serves (the host publishes the address)
    finished           run() returned
    stop               the node asks the program to stop (launchpad_client.stop(),
                       or SIGTERM or SIGINT sent to its process)
    follow             a peer refused a call because the program stops: the
                       node stops with it, without claiming the stop
    address <label>    where does node <label> serve? (a handle's first use, and
                       after its node stopped answering)

and the host writes:

    run                every node of the program serves: run() starts, as a
                       C++ node's does
    stop               the program stops: stop_requested() is true from now on
                       (the host writes it when its C++ nodes see their stop)
    end                drain the calls, save the checkpoint and exit: the host's
                       runs have returned (run() is waited for first, if not)

and answers each `address` request, one at a time, with one line:

    address <label> <url>
    address <label> <url> <socket>      (the node's unix socket on this host)
    address <label> - <why there is none>

When the socket ends (the host is gone) the node ends as at `end`, so
that it never outlives its host. A node started by hand has no host: a
handle finds its node in the run directory's nodes file, and a stop
(SIGTERM, SIGINT, launchpad_client.stop()) ends the node. LP_TUNE_MALLOC=1,
unless the launch has --lp_system_malloc, asks it to tune glibc's malloc as
a C++ node's process does (_node/malloc_tuning.py).

Before anything serves it imports the module, finds the class and compares
it with the C++ declaration: its methods' type hints, run()
against has_run, and its checkpoint methods (both state() and
restore(value), or neither). Each failure ends the process with its own exit
status and a message that says what to do. A class that keeps checkpoints,
given a "checkpoint" in its spec, restores its state from "restore" (a
missing file: it starts empty) before it serves, and saves it to "save"
every interval_ms and when it ends. At its end (the host's
`end`, or its loss) it waits for run() to return, stops taking calls, lets
the running ones end, saves, and exits 0. Given a health_timeout_ms, it
ends itself as a C++ node process does when its node hangs, with the status
its launcher reads (124: a call waited that long for its handlers, 125:
run() made no sign of progress): its host ends with the same.

The spec's keys, the lines and the statuses are those of
include/launchpad/detail/protocol/protocol.toml, which the host reads too;
the process itself is launchpad_client._node.main.
"""

import sys

from ._node.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv))
