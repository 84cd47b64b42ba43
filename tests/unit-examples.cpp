// Each example's program, launched under test_multi_threading, with its result
// checked. The examples' main()s are run by meson too (examples/meson.build).
#include "../examples/consumer_producers/consumer_producers.hpp"
#include "../examples/hello_world/hello_world.hpp"
#include "../examples/program_wait/program_wait.hpp"
#include "services.hpp"

TEST_SUITE("examples") {
  TEST_CASE("hello_world stops itself") {
    lp::program p("hello_world");
    hello_world::make_program(p, "Hi");
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait_for(std::chrono::seconds(30)));
  }

  TEST_CASE("program_wait: a node stops the program halfway") {
    lp::program p("program_wait");
    program_wait::make_program(p, "node", 40);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto worker = running.client(p.find<program_wait::Worker>("workers/0"));
    CHECK(running.wait_for(std::chrono::seconds(60)));
    CHECK_THROWS_AS(worker.progress(), lp::transport_error);  // stopped
  }

  TEST_CASE("program_wait: the test waits for a group, looks, then stops the program") {
    lp::program p("program_wait");
    program_wait::make_program(p, "workers", 10);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait({"workers"}));
    for (int i = 0; i < 3; ++i)
      CHECK(running.client(p.find<program_wait::Worker>("workers/" + std::to_string(i))).progress() == 10);
    running.stop();
  }

  TEST_CASE("program_wait: a program that only serves stops when main says so") {
    lp::program p("program_wait");
    program_wait::make_program(p, "outside", 10);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.client(p.find<program_wait::Clock>("clock")).now() > 0);
    CHECK_FALSE(running.wait_for(std::chrono::milliseconds(50)));
    lp::stop();
    CHECK(running.wait_for(std::chrono::seconds(10)));
  }

  TEST_CASE("consumer_producers sums what every producer computed") {
    std::atomic<long> total{-1};
    lp::program p("consumer_producers");
    consumer_producers::make_program(p, 4, 1000, [&](long sum) { total = sum; });
    CHECK(p.nodes().size() == 5);
    lp::launch<lp::test_multi_threading>(p).wait();
    CHECK(total == 999L * 1000 * 1999 / 6);  // sum of i*i for i < 1000
  }
}
