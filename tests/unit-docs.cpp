// What the docs promise, pinned: each case names the section of
// docs/concepts.md whose behaviour it checks.
#include <future>

#include "services.hpp"

namespace docs {
using namespace std::chrono_literals;

// The nodes of a test_multi_threading launch are threads of this process, so
// a batched method and the test can meet on these.
static std::atomic<bool> batch_running{false};
static std::atomic<bool> other_entered{false};

static bool wait_for_flag(const std::atomic<bool>& flag,
                          std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!flag && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(1ms);
  return flag;
}

// One batch of act: waits up to `limit` for other() to start meanwhile, and
// answers each caller whether it did.
static std::vector<int> batch_meeting_other(std::size_t size,
                                            std::chrono::milliseconds limit) {
  batch_running = true;
  bool met = wait_for_flag(other_entered, limit);
  batch_running = false;
  return std::vector<int>(size, met ? 1 : 0);
}

// Default actor semantics: a batch takes the node's turn like any call.
struct SerialModel {
  std::vector<int> act(std::vector<int> observations) {
    return batch_meeting_other(observations.size(), 300ms);
  }
  // 1 if it started while a batch of act ran.
  int other() {
    other_entered = true;
    return batch_running ? 1 : 0;
  }
  // As other(), batched.
  std::vector<int> other_batched(std::vector<int> xs) {
    other_entered = true;
    return std::vector<int>(xs.size(), batch_running ? 1 : 0);
  }
  // Gathers two callers, or waits 10 s for a second one.
  std::vector<int> pair(std::vector<int> xs) { return xs; }
  int ping() { return 7; }
};

// Concurrent handlers: a batch runs alongside the node's other calls, but
// the batches of one method still run one at a time.
struct ConcurrentModel {
  static constexpr bool lp_concurrent_handlers = true;
  std::vector<int> act(std::vector<int> observations) {
    return batch_meeting_other(observations.size(), 10s);
  }
  int other() {
    other_entered = true;
    return batch_running ? 1 : 0;
  }
  // As other(), batched.
  std::vector<int> other_batched(std::vector<int> xs) {
    other_entered = true;
    return std::vector<int>(xs.size(), batch_running ? 1 : 0);
  }
  std::vector<int> slow(std::vector<int> xs) {
    int now = ++inside;
    for (int seen = peak; now > seen && !peak.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(20ms);
    --inside;
    return xs;
  }
  int most_at_once() const { return peak; }
  std::atomic<int> inside{0}, peak{0};
};

struct Producer {
  lp::client<t::Counter> counter;
  void run() {}
};

// What a make_program function might return: handles, filled in later.
struct Graph {
  lp::handle<t::Counter> counter;
  std::vector<lp::handle<Producer>> producers;
};
}  // namespace docs

LP_SERVICE(docs::SerialModel, act, other, other_batched, pair, ping);
LP_BATCHED(docs::SerialModel, other_batched, 4, std::chrono::milliseconds(1));
LP_BATCHED(docs::SerialModel, act, 4, std::chrono::milliseconds(1));
LP_BATCHED(docs::SerialModel, pair, 2, std::chrono::seconds(10));
LP_SERVICE(docs::ConcurrentModel, act, other, other_batched, slow, most_at_once);
LP_BATCHED(docs::ConcurrentModel, other_batched, 4, std::chrono::milliseconds(1));
LP_BATCHED(docs::ConcurrentModel, act, 4, std::chrono::milliseconds(1));
LP_BATCHED(docs::ConcurrentModel, slow, 2, std::chrono::milliseconds(1));
LP_SERVICE(docs::Producer);

TEST_SUITE("docs") {
  // concepts.md, "Big values": reading a tensor.
  TEST_CASE("a tensor's shape, size and values, as the docs read them") {
    lp::tensor<float> zeros({2, 3});
    CHECK(zeros.shape() == std::vector<std::size_t>{2, 3});
    CHECK(zeros.rank() == 2);
    CHECK(zeros.size() == 6);
    CHECK(zeros.values() == std::vector<float>(6, 0.0f));

    lp::tensor<float> t({2, 3}, {0, 1, 2, 3, 4, 5});  // row-major
    CHECK(t(1, 2) == 5.0f);
    CHECK(t(1, 0) == 3.0f);
    CHECK(t[4] == 4.0f);  // flat index: row * 3 + column
    const float* raw = t.data();
    CHECK(raw[1] == 1.0f);
    t(0, 1) = 10.0f;  // the same value through every accessor
    CHECK(t[1] == 10.0f);
    CHECK(t.data()[1] == 10.0f);
    CHECK(t.values()[1] == 10.0f);
    float sum = 0;
    for (float v : t.values()) sum += v;
    CHECK(sum == 24.0f);
    const auto& read_only = t;
    static_assert(std::is_same_v<decltype(read_only.data()), const float*>);
    static_assert(
        std::is_same_v<decltype(read_only.values()), const std::vector<float>&>);
    static_assert(
        std::is_same_v<decltype(read_only.shape()), const std::vector<std::size_t>&>);
    static_assert(
        std::is_same_v<lp::tensor<float>::shape_type, std::vector<std::size_t>>);
    CHECK(read_only(0, 1) == 10.0f);
    CHECK(read_only[5] == 5.0f);

    CHECK(lp::tensor<float>({2, 3}, {0, 1, 2, 3, 4, 5}) ==
          lp::tensor<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
    CHECK(lp::tensor<float>({2, 3}) !=
          lp::tensor<float>({3, 2}));  // same values, other shape
    CHECK_THROWS_WITH_AS(lp::tensor<float>({2, 3}, {1, 2}),
                         doctest::Contains("holds 6 values, not 2"), lp::usage_error);
    lp::tensor<double> none;
    CHECK(none.rank() == 0);
    CHECK(none.size() == 0);
  }

  // concepts.md, "Handles and clients": the empty handle.
  TEST_CASE("a default-constructed handle is empty, and add_node refuses it by name") {
    lp::handle<t::Counter> empty;
    CHECK(empty.label().empty());
    CHECK(empty.empty());

    lp::program p("docs_handles");
    docs::Graph graph;  // a struct of handles needs no initialiser
    CHECK_THROWS_WITH_AS(
        p.add_node<docs::Producer>("producer", graph.counter),
        doctest::Contains("node 'producer' was given an empty lp::handle"),
        lp::graph_error);
    CHECK(p.nodes().empty());  // the refused node was not added
    std::vector<lp::handle<t::Counter>> some(2);
    some[0] = p.add_node<t::Counter>("counter");
    CHECK_THROWS_WITH_AS(p.add_node<docs::Producer>("producer", some[1]),
                         doctest::Contains("empty lp::handle"), lp::graph_error);

    graph.counter = p.add_node<t::Counter>("counter2");  // assigned later, as a handle is
    CHECK_FALSE(graph.counter.empty());
    CHECK(graph.counter.label() == "counter2");
    graph.producers.push_back(p.add_node<docs::Producer>("producer", graph.counter));
    CHECK(p.node("producer").edges == std::vector<std::string>{"counter2"});
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK_THROWS_AS(running.client(lp::handle<t::Counter>{}), lp::graph_error);
  }

  // concepts.md, "Batched methods": a batch is one turn of the node.
  TEST_CASE("a batch takes the node's turn: no other call of the node runs during it") {
    docs::batch_running = false;
    docs::other_entered = false;
    lp::program p("docs_batch_serial");
    auto node = p.add_node<docs::SerialModel>("model");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto model = running.client(node);
    auto batch = model.async.act(1);
    REQUIRE(docs::wait_for_flag(docs::batch_running, std::chrono::seconds(10)));
    // other() arrives while the batch runs (it waits 300 ms for it) and
    // gets its turn only after the batch.
    CHECK(model.other() == 0);
    CHECK(batch.get() == 0);  // the batch never saw other() start
    // Nor does a batch of another batched method run during it.
    docs::other_entered = false;
    batch = model.async.act(1);
    REQUIRE(docs::wait_for_flag(docs::batch_running, std::chrono::seconds(10)));
    CHECK(model.other_batched(1) == 0);
    CHECK(batch.get() == 0);
  }

  TEST_CASE("gathering a batch does not hold the node: its other calls go on meanwhile") {
    lp::program p("docs_batch_gather");
    auto node = p.add_node<docs::SerialModel>("model");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto model = running.client(node);
    // pair waits for a second caller (or 10 s): the first one waits...
    auto first = model.async.pair(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // ...while other calls of the node run,
    CHECK(model.ping() == 7);
    CHECK(first.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
    // until a second caller completes the batch.
    auto second = model.async.pair(2);
    CHECK(first.get() == 1);
    CHECK(second.get() == 2);
  }

  TEST_CASE(
      "with concurrent handlers a batch runs alongside other calls, one batch at a "
      "time") {
    docs::batch_running = false;
    docs::other_entered = false;
    lp::program p("docs_batch_concurrent");
    auto node = p.add_node<docs::ConcurrentModel>("model");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto model = running.client(node);
    auto batch = model.async.act(1);
    REQUIRE(docs::wait_for_flag(docs::batch_running, std::chrono::seconds(10)));
    CHECK(model.other() == 1);  // it ran inside the batch...
    CHECK(batch.get() == 1);    // ...which saw it start
    // So does a batch of another batched method.
    docs::other_entered = false;
    batch = model.async.act(1);
    REQUIRE(docs::wait_for_flag(docs::batch_running, std::chrono::seconds(10)));
    CHECK(model.other_batched(1) == 1);
    CHECK(batch.get() == 1);
    // 8 concurrent callers, batches of at most 2: several batches, never two
    // at once.
    std::vector<std::future<int>> calls;
    for (int i = 0; i < 8; ++i) calls.push_back(model.async.slow(i));
    int exact = 0;
    for (int i = 0; i < 8; ++i) exact += calls[static_cast<std::size_t>(i)].get() == i;
    CHECK(exact == 8);
    CHECK(model.most_at_once() == 1);
  }
}
