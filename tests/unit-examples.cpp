// Each example's program, launched under test_multi_threading, with its result
// checked. The examples' main()s are run by meson too (examples/meson.build).
#include <mutex>
#include <random>
#include <set>

#include "../examples/actor_learner/actor_learner.hpp"
#include "../examples/batching/batching.hpp"
#include "../examples/consumer_producers/consumer_producers.hpp"
#include "../examples/hello_world/hello_world.hpp"
#include "../examples/mapreduce/mapreduce.hpp"
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
      CHECK(running.client(p.find<program_wait::Worker>("workers/" + std::to_string(i)))
                .progress() == 10);
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

  TEST_CASE(
      "batching: every actor gets its own action, from fewer invocations than calls") {
    batching::Summary summary;
    lp::program p("batching");
    batching::make_program(p, 16, 20, [&](const batching::Summary& s) { summary = s; });
    CHECK(lp::launch<lp::test_multi_threading>(p).wait_for(std::chrono::seconds(60)));
    CHECK(summary.calls == 16 * 20);
    CHECK(summary.wrong == 0);
    CHECK(summary.batches > 0);
    CHECK(summary.batches < summary.calls);  // 16 actors at once: batches formed
  }

  TEST_CASE("consumer_producers sums what every producer computed") {
    std::atomic<long> total{-1};
    lp::program p("consumer_producers");
    consumer_producers::make_program(p, 4, 1000, [&](long sum) { total = sum; });
    CHECK(p.nodes().size() == 5);
    lp::launch<lp::test_multi_threading>(p).wait();
    CHECK(total == 999L * 1000 * 1999 / 6);  // sum of i*i for i < 1000
  }

  TEST_CASE("mapreduce counts every word as one thread would") {
    // Seeded random text, so that every word turns up in many shards and the
    // reducers see many partial counts of it.
    const std::vector<std::string> vocabulary = {
        "map", "reduce", "node", "graph", "Word", "shard", "count", "it's", "a", "the"};
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> pick(0, vocabulary.size() - 1);
    std::vector<std::string> shards;
    std::string text;
    for (int s = 0; s < 40; ++s) {
      std::string shard;
      for (int w = 0; w < 50; ++w) shard += vocabulary[pick(rng)] + (w % 7 ? " " : ", ");
      shards.push_back(shard);
      text += shard + "\n";
    }

    std::mutex mutex;
    mapreduce::counts result;
    lp::program p("mapreduce");
    mapreduce::make_program(p, shards, 3, 2, [&](const mapreduce::counts& counts) {
      std::lock_guard lock(mutex);
      result = counts;
    });
    CHECK(p.nodes().size() == 6);
    lp::launch<lp::test_multi_threading>(p).wait();
    std::lock_guard lock(mutex);
    CHECK(result == mapreduce::count_words(text));
    CHECK(result.size() == vocabulary.size());
    CHECK(result.count("word") == 1);  // lower-cased
  }

  TEST_CASE("mapreduce of main's shards: more mappers and reducers than needed") {
    std::mutex mutex;
    mapreduce::counts result;
    std::string text;
    for (const auto& shard : mapreduce::sample_shards()) text += shard + "\n";
    lp::program p("mapreduce");
    auto keep = [&](const mapreduce::counts& counts) {
      std::lock_guard lock(mutex);
      result = counts;
    };
    mapreduce::make_program(p, mapreduce::sample_shards(), 8, 5, keep);
    lp::launch<lp::test_multi_threading>(p).wait();
    std::lock_guard lock(mutex);
    CHECK(result == mapreduce::count_words(text));
    CHECK(result.at("the") == 11);
  }

  TEST_CASE("actor_learner: what the actors saw teaches the learner to beat chance") {
    lp::program p("actor_learner");
    auto nodes =
        actor_learner::make_program(p, 3, {}, [](const actor_learner::parameters&) {});
    CHECK(p.nodes().size() == 6);  // replay, learner, weights (the cacher), 3 actors
    auto running = lp::launch<lp::test_multi_threading>(p);
    // The learner returns after its updates, and the actors when it is done.
    REQUIRE(running.wait({"learner", "actors"}));
    auto learner = running.client(nodes.learner);
    CHECK(learner.done());
    auto score = actor_learner::evaluate(learner.get_parameters());
    MESSAGE("average return: learned ", score.learned, ", random ", score.random);
    CHECK(score.learned == 1.0);  // reaches the goal, every time
    CHECK(score.learned > score.random + 1.0);
    // The cacher serves the learner's last parameters.
    CHECK(running.client(nodes.weights).get_parameters() == learner.get_parameters());
    // Full, and the rate limiter held the learner to about 8 samples per
    // insert after the first 500: its 400 * 64 samples took at least
    // 500 + (400 * 64 - 800) / 8 inserts (800: the limiter's error buffer).
    auto info = running.client(nodes.replay).info();
    REQUIRE(info.size() == 1);
    CHECK(info[0].size == 2000);
    CHECK(info[0].samples == 400 * 64);
    CHECK(info[0].inserts >= 500 + (400 * 64 - 800) / 8);
    running.stop();
  }
}
