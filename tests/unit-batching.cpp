// Batched methods (LP_BATCHED): many callers, one invocation per batch, each
// caller its own result.
#include <httplib.h>

#include <future>

#include "services.hpp"

namespace b {
// Squares each input; records the size of every batch it was given.
struct Squarer {
  std::vector<long> square(std::vector<long> xs) {
    batches.push_back(xs.size());
    for (auto& x : xs) x *= x;
    return xs;
  }
  std::vector<std::size_t> sizes() const { return batches; }
  std::vector<std::size_t> batches;
};

struct Pairs {
  std::vector<std::string> join(std::vector<std::string> a, std::vector<int> b) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(a[i] + std::to_string(b[i]));
    return out;
  }
  void record(std::vector<int> xs) {
    for (int x : xs) seen += x;
  }
  std::vector<int> wrong_count(std::vector<int> xs) {
    return std::vector<int>(xs.size() + 1);
  }
  std::vector<int> fail(std::vector<int>) { throw std::runtime_error("no batch today"); }
  long total() const { return seen; }
  long seen = 0;
};
}  // namespace b

LP_SERVICE(b::Squarer, square, sizes);
LP_BATCHED(b::Squarer, square, 16, std::chrono::milliseconds(20));
LP_SERVICE(b::Pairs, join, record, wrong_count, fail, total);
LP_BATCHED(b::Pairs, join, 8, std::chrono::milliseconds(1));
LP_BATCHED(b::Pairs, record, 8, std::chrono::milliseconds(1));
LP_BATCHED(b::Pairs, wrong_count, 8, std::chrono::milliseconds(50));
LP_BATCHED(b::Pairs, fail, 8, std::chrono::milliseconds(1));

TEST_SUITE("batching") {
  TEST_CASE("callers see single elements; the node sees batches") {
    lp::program p("batching");
    auto node = p.add_node<b::Squarer>("squarer");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto squarer = running.client(node);
    static_assert(std::is_same_v<decltype(squarer.square(3)), long>);
    static_assert(std::is_same_v<decltype(squarer.async.square(3)), std::future<long>>);
    CHECK(squarer.square(7) == 49);  // alone: a partial batch after max_wait
    // 64 concurrent callers, each with its own value: each gets its own square.
    std::vector<std::future<long>> futures;
    for (long i = 0; i < 64; ++i) futures.push_back(squarer.async.square(i));
    int exact = 0;
    for (long i = 0; i < 64; ++i)
      exact += futures[static_cast<std::size_t>(i)].get() == i * i;
    CHECK(exact == 64);
    auto sizes = squarer.sizes();
    std::size_t calls = 0, largest = 0;
    for (auto size : sizes) {
      calls += size;
      largest = std::max(largest, size);
    }
    CHECK(calls == 65);
    CHECK(largest <= 16);       // never more than max_batch
    CHECK(sizes.size() < 65);   // and calls were gathered: fewer invocations than calls
    CHECK(sizes.front() == 1);  // the lone first call
  }

  TEST_CASE(
      "several parameters, void results, and what a broken batch tells each caller") {
    lp::program p("batching_more");
    auto node = p.add_node<b::Pairs>("pairs");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto pairs = running.client(node);
    std::vector<std::thread> threads;
    std::atomic<int> exact{0};
    for (int t = 0; t < 16; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 20; ++i) {
          exact += pairs.join("x" + std::to_string(t) + "-", i) ==
                   "x" + std::to_string(t) + "-" + std::to_string(i);
          pairs.record(1);
        }
      });
    for (auto& thread : threads) thread.join();
    CHECK(exact == 16 * 20);
    CHECK(pairs.total() == 16 * 20);  // every void call ran once
    auto a = pairs.async.wrong_count(1), c = pairs.async.wrong_count(2);
    for (auto* f : {&a, &c})
      CHECK_THROWS_WITH_AS(f->get(), doctest::Contains("one result per call"),
                           lp::remote_error);
    CHECK_THROWS_WITH_AS(pairs.fail(1), doctest::Contains("no batch today"),
                         lp::remote_error);
  }

  TEST_CASE("curl calls a batched method with one element, like any other") {
    lp::program p("batching_http");
    auto node = p.add_node<b::Squarer>("squarer");
    auto running = lp::launch<lp::test_multi_threading>(p);
    httplib::Client http(running.urls().at("squarer"));
    http.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    auto reply = http.Post("/lp/v1/call/square", "[12]", "application/json");
    REQUIRE(reply);
    CHECK(reply->body == R"({"result":144})");
    auto described = http.Get("/lp/v1/describe");
    REQUIRE(described);
    auto methods = lp::json::parse(described->body)["methods"];
    // The compiler spells the types: "long int" (g++) or "long" (clang++).
    auto signature = methods[0]["signature"].get<std::string>();
    CHECK(signature.rfind("long", 0) == 0);
    CHECK(signature.find(" square(long") != std::string::npos);
    CHECK(methods[0]["batched"] == lp::json{{"max_batch", 16}, {"max_wait_us", 20000}});
    CHECK_FALSE(methods[1].contains("batched"));
    (void)node;
  }
}
