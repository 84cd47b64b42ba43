"""Launchpad's consumer/producers example and its absltest, written as
Launchpad's users write them: the consumer's run() disabled, the program
launched under test_mt (and test_mp) with test_case=self, the consumer's
handle dereferenced in the test, and the test's cleanup stopping the
program. test_launchpad.py runs this file as a process of its own."""

from absl import logging
from absl.testing import absltest

import launchpad as lp


class Consumer:
    """Calls the producers, ten steps in its run()."""

    def __init__(self, producers):
        self._producers = producers

    def run(self):
        for _ in range(10):
            self.step()
        lp.stop()

    def step(self):
        futures = [producer.futures.work(context)
                   for context, producer in enumerate(self._producers)]
        results = [future.result() for future in futures]
        logging.info("Results: %s", results)
        return results


class Producer:
    def work(self, context):
        return context


def make_program(num_producers):
    program = lp.Program("consumer_producers")
    with program.group("producer"):
        producers = [program.add_node(lp.CourierNode(Producer)) for _ in range(num_producers)]
    program.add_node(lp.CourierNode(Consumer, producers=producers), label="consumer")
    return program


class LaunchTest(absltest.TestCase):

    def check_consumer_steps(self, launch_type):
        program = make_program(num_producers=2)
        (consumer_node,) = program.groups["consumer"]
        consumer_node.disable_run()
        lp.launch(program, launch_type=launch_type, test_case=self)
        consumer = consumer_node.create_handle().dereference()
        for _ in range(10):
            self.assertEqual(consumer.step(), [0, 1])
        # A producer's handle from add_node, called from the test too, with futures.
        producer = program.groups["producer"][1].create_handle().dereference()
        self.assertEqual(producer.futures.work(41).result(), 41)

    def test_consumer_steps_test_mt(self):
        self.check_consumer_steps("test_mt")

    def test_consumer_steps_test_mp(self):
        self.check_consumer_steps("test_mp")

    def test_colocated_consumer_producers_test_mt(self):
        # The producers and the consumer as threads of one process, each
        # dereferenced from its own handle.
        program = lp.Program("colocated")
        producers = [lp.CourierNode(Producer) for _ in range(2)]
        colocation = lp.MultiThreadingColocation(producers)
        handles = [producer.create_handle() for producer in producers]
        consumer_node = lp.CourierNode(Consumer, producers=handles)
        consumer_node.disable_run()
        colocation.add_node(consumer_node)
        program.add_node(colocation, label="colocation")
        lp.launch(program, launch_type="test_mt", test_case=self)
        consumer = consumer_node.create_handle().dereference()
        self.assertEqual(consumer.step(), [0, 1])
        self.assertEqual(handles[1].dereference().futures.work(7).result(), 7)


if __name__ == "__main__":
    absltest.main()
