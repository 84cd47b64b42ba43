// Each example's program, launched under test_multi_threading, with its result
// checked. The examples' main()s are run by meson too (examples/meson.build).
#include "../examples/consumer_producers/consumer_producers.hpp"
#include "../examples/hello_world/hello_world.hpp"
#include "services.hpp"

TEST_SUITE("examples") {
  TEST_CASE("hello_world stops itself") {
    lp::program p("hello_world");
    hello_world::make_program(p, "Hi");
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait_for(std::chrono::seconds(30)));
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
