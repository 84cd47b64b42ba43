// lp::replay<Item> against a node that only stores what it is sent: inserts/s
// and samples/s with 8 writers and 1 sampler, for 1 KB byte items and 64 KB
// float tensors; and the heap a stored item costs against its size.
// Ratios are replay / baseline, measured in the same run, interleaved
// (benchmarks/README.md, "Replay").
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <launchpad/launchpad.hpp>
#include <launchpad/replay.hpp>
#include <mutex>
#include <thread>
#include <vector>

namespace bench {

using bytes = std::vector<std::uint8_t>;
using floats = lp::tensor<float>;

// The baseline: keeps the last items it was sent, returns one on request.
template <class Item>
struct store {
  static constexpr bool lp_concurrent_handlers = true;
  long put(Item item) {
    std::lock_guard lock(mutex);
    items.push_back(std::move(item));
    if (items.size() > 10'000) items.pop_front();
    return static_cast<long>(items.size());
  }
  std::vector<Item> get(long n) {
    std::lock_guard lock(mutex);
    std::vector<Item> out;
    for (long i = 0; i < n && !items.empty(); ++i)
      out.push_back(items[(next++) % items.size()]);
    return out;
  }
  std::mutex mutex;
  std::deque<Item> items;
  std::size_t next = 0;
};
using byte_store = store<bytes>;
using float_store = store<floats>;
LP_SERVICE(byte_store, put, get);
LP_SERVICE(float_store, put, get);

bytes make(bytes*, std::size_t size) {
  return bytes(size, 7);
}
floats make(floats*, std::size_t size) {
  return floats({size / sizeof(float)}, std::vector<float>(size / sizeof(float), 0.5f));
}

struct rates {
  double inserts_per_s, samples_per_s;
};

// 8 writers and 1 sampler for `seconds`, through `insert(item)` and `sample()`.
template <class Item, class Insert, class Sample>
rates measure(std::size_t size, double seconds, Insert insert, Sample sample) {
  std::atomic<bool> done{false};
  std::atomic<long> inserts{0}, samples{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w)
    threads.emplace_back([&] {
      auto item = make(static_cast<Item*>(nullptr), size);
      while (!done) {
        insert(item);
        ++inserts;
      }
    });
  threads.emplace_back([&] {
    while (!done) samples += sample();
  });
  auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  done = true;
  for (auto& t : threads) t.join();
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {static_cast<double>(inserts) / took, static_cast<double>(samples) / took};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Item, class Store>
void throughput(const char* what, const char* program, std::size_t size, int trials,
                double seconds) {
  lp::program p(program);
  auto replay = p.add_node<lp::replay<Item>>(
      "replay",
      lp::replay_config{.tables = {{.name = "t", .max_size = 10'000}}, .seed = 1});
  auto plain = p.add_node<Store>("store");
  auto running = lp::launch<lp::test_multi_threading>(p);
  auto r = running.client(replay);
  auto s = running.client(plain);
  std::vector<double> ri, rs, bi, bs;
  for (int trial = 0; trial < trials; ++trial) {
    auto a = measure<Item>(
        size, seconds, [&](const Item& item) { r.insert("t", item, 1.0); },
        [&] { return static_cast<long>(r.sample("t", 1).size()); });
    auto b = measure<Item>(
        size, seconds, [&](const Item& item) { s.put(item); },
        [&] { return static_cast<long>(s.get(1).size()); });
    ri.push_back(a.inserts_per_s);
    rs.push_back(a.samples_per_s);
    bi.push_back(b.inserts_per_s);
    bs.push_back(b.samples_per_s);
  }
  std::printf("| %s | inserts/s | %.0f | %.0f | %.2f |\n", what, median(ri), median(bi),
              median(ri) / median(bi));
  std::printf("| %s | samples/s | %.0f | %.0f | %.2f |\n", what, median(rs), median(bs),
              median(rs) / median(bs));
  running.stop();
}

template <class Item>
void memory(const char* what, std::size_t size, std::size_t count) {
  lp::replay<Item> replay({.tables = {{.name = "t", .max_size = count}}, .seed = 1});
  auto before = mallinfo2().uordblks;
  for (std::size_t i = 0; i < count; ++i)
    replay.insert("t", make(static_cast<Item*>(nullptr), size), 1.0);
  auto after = mallinfo2().uordblks;
  double per_item = static_cast<double>(after - before) / static_cast<double>(count);
  std::printf("| %s | %zu | %.0f | %.3f | %.0f |\n", what, size, per_item,
              per_item / static_cast<double>(size), per_item - static_cast<double>(size));
}

}  // namespace bench

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int trials = quick ? 1 : 5;
  double seconds = quick ? 0.2 : 1.0;
#ifdef __OPTIMIZE__
  const char* build = "";
#else
  const char* build = " (NOT OPTIMIZED)";
#endif
  std::printf("bench_replay%s: 8 writers, 1 sampler; medians of %d trials of %.1f s\n\n",
              build, trials, seconds);
  std::printf(
      "| items | figure | replay | plain store | ratio |\n| --- | --- | --- | --- | --- "
      "|\n");
  bench::throughput<bench::bytes, bench::byte_store>("1 KB bytes", "bench_replay_bytes",
                                                     1024, trials, seconds);
  bench::throughput<bench::floats, bench::float_store>(
      "64 KB tensor", "bench_replay_tensors", 64 * 1024, trials, seconds);
  std::printf(
      "\n| items | item bytes | heap bytes per stored item | ratio | overhead bytes |\n"
      "| --- | --- | --- | --- | --- |\n");
  bench::memory<bench::bytes>("1 KB bytes", 1024, quick ? 2'000 : 20'000);
  bench::memory<bench::floats>("64 KB tensor", 64 * 1024, quick ? 200 : 2'000);
  return 0;
}
