"""A Launchpad program to observe (test_observe.py): consumer/producers
that stay up until the program stops, so that its status page, its
metrics and --lp_status can be read while it runs.

`observed.py LAUNCH_TYPE DIRECTORY CALLS [flaky] [--lp_* flags]`: the consumer
makes CALLS calls of producer/0's work (and one of each other producer's),
counting them in its counter `works` (works_total), then writes
DIRECTORY/called; the node labelled `doomed` raises once
DIRECTORY/fail appears; every node returns at the stop. With `flaky`, the
group `flaky` restarts its node once (restart_on_failure(1)): its first
run() writes DIRECTORY/crashed and raises, its second writes
DIRECTORY/restarted and waits for the stop."""

import os
import sys
import time

import launchpad as lp
from launchpad_client import metrics

BOUND = 300  # seconds: no node outlives a test that forgot it


class Producer:
    def work(self, context):
        return context + 1


class Consumer:
    def __init__(self, producers, directory, calls):
        self._producers, self._directory, self._calls = producers, directory, calls

    def run(self):
        first, *others = self._producers
        works = metrics.counter("works")
        for i in range(self._calls):
            assert first.work(i) == i + 1
            works.add(1)
        for other in others:
            other.futures.work(0).result()
        with open(os.path.join(self._directory, "called"), "w"):
            pass
        lp.wait_for_stop(BOUND)


class Doomed:
    def __init__(self, directory):
        self._directory = directory

    def run(self):
        give_up = time.monotonic() + BOUND
        while not lp.stop_event().is_set() and time.monotonic() < give_up:
            if os.path.exists(os.path.join(self._directory, "fail")):
                raise RuntimeError("doomed was told to fail")
            time.sleep(0.05)


class Flaky:
    def __init__(self, directory):
        self._directory = directory

    def run(self):
        crashed = os.path.join(self._directory, "crashed")
        if not os.path.exists(crashed):
            with open(crashed, "w"):
                pass
            raise RuntimeError("flaky fails its first run")
        with open(os.path.join(self._directory, "restarted"), "w"):
            pass
        lp.wait_for_stop(BOUND)


def main():
    launch_type, directory, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    program = lp.Program("observed")
    with program.group("producer"):
        producers = [program.add_node(lp.CourierNode(Producer)) for _ in range(3)]
    program.add_node(lp.CourierNode(Consumer, producers, directory, calls), label="consumer")
    program.add_node(lp.PyClassNode(Doomed, directory), label="doomed")
    if sys.argv[4:5] == ["flaky"]:
        with program.group("flaky").restart_on_failure(1, backoff=0.1):
            program.add_node(lp.PyClassNode(Flaky, directory))
    lp.launch(program, launch_type=launch_type).wait()


if __name__ == "__main__":
    main()
