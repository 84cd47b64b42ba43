"""A Launchpad program that calls a C++ node (docs/coming_from_launchpad.md,
"Calling a C++ node"): the C++ program beside this file (main.cpp, built by
meson as build/examples/launchpad_cpp) runs as the node "calculator", and a
Python node calls its methods, sync and with futures.

    PYTHONPATH=python /usr/bin/python3 examples/launchpad_cpp/launch.py \\
        build/examples/launchpad_cpp [local_mt|local_mp] [RESULT.json]

With RESULT.json, the user node writes what came back there (the test in
tests/launchpad reads it).
"""

import json
import sys

import numpy as np

import launchpad as lp


def use(calculator, result_file):
    """Calls the C++ node, then stops the program."""
    results = {
        "add": calculator.add(2, 40),
        "scale": calculator.scale(np.array([1.0, 2.5, -4.0]), 2.0),
        "greet": calculator.futures.greet("Launchpad").result(),
        "sums": [f.result() for f in [calculator.futures.add(i, i) for i in range(5)]],
    }
    try:
        calculator.add("two", 40)  # checked against the C++ declaration: long
    except Exception as e:  # a RemoteError, from the node that checked it
        results["refused"] = f"{type(e).__name__}: {e}"
    try:
        calculator.add(2, b=40)  # C++ methods take no keyword arguments
    except Exception as e:
        results["keywords"] = f"{type(e).__name__}: {e}"
    for name, value in results.items():
        print(f"{name}: {value!r}", flush=True)
    if result_file:
        scaled = results["scale"]
        results["scale"] = [type(scaled).__name__, str(scaled.dtype), scaled.tolist()]
        with open(result_file, "w") as f:
            json.dump(results, f)
    lp.stop()


def main(argv):
    executable = argv[1]
    launch_type = argv[2] if len(argv) > 2 else "local_mt"
    result_file = argv[3] if len(argv) > 3 else None
    program = lp.Program("calculate")
    calculator = program.add_node(lp.CppNode(executable), label="calculator")
    program.add_node(lp.PyNode(use, calculator, result_file), label="user")
    lp.launch(program, launch_type=launch_type)


if __name__ == "__main__":
    main(sys.argv)
