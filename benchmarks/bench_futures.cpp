// 10,000 outstanding futures against one node: how long until every one is
// answered, and what they cost in threads and memory while outstanding
// (docs/concepts.md, "Futures, threads and memory"). The baseline, in the
// same run and interleaved: the same number of sequential sync calls from
// one thread. benchmarks/README.md has the figures.
//
//   bench_futures [--count N] [--reps R]
//
// Prints one line per burst and a summary; exits 1 if a result is wrong.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <launchpad/launchpad.hpp>

#include <string>
#include <thread>
#include <vector>
#include "../tests/process_figures.hpp"

namespace bench {
struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
}  // namespace bench
LP_SERVICE(bench::Counter, add);

namespace {
using steady = std::chrono::steady_clock;

using figures::resident_mib;
using figures::threads_now;

double ms_since(steady::time_point start) {
  return std::chrono::duration<double, std::milli>(steady::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "bench_futures: %s\n", what);
  std::exit(1);
}
}  // namespace

int main(int argc, char** argv) {
  long count = 10'000;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--count" && i + 1 < argc)
      count = std::atol(argv[++i]);
    else if (arg == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_futures [--count N] [--reps R]\n");
      return 2;
    }
  }
  if (count < 1 || reps < 1) return 2;
  lp::program p("bench_futures");
  auto c = p.add_node<bench::Counter>("counter");
  auto running = lp::launch<lp::test_multi_threading>(p);
  auto counter = running.client(c);
  long expected = counter.add(0);
  long idle_tasks = threads_now();
  double idle_mib = resident_mib();

  std::vector<double> async_ms, sync_ms;
  long peak_tasks = idle_tasks;
  double peak_mib = idle_mib;
  for (int rep = 0; rep < reps; ++rep) {
    // Samples threads and RSS every millisecond while the futures are out.
    std::atomic<bool> done{false};
    long rep_tasks = 0;
    double rep_mib = 0;
    std::thread sampler([&] {
      while (!done) {
        rep_tasks = std::max(rep_tasks, threads_now() - 1);  // not the sampler
        rep_mib = std::max(rep_mib, resident_mib());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    auto start = steady::now();
    std::vector<std::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(count));
    for (long i = 0; i < count; ++i) futures.push_back(counter.async.add(1));
    std::vector<long> totals;
    totals.reserve(futures.size());
    for (auto& f : futures) totals.push_back(f.get());
    async_ms.push_back(ms_since(start));
    done = true;
    sampler.join();
    std::sort(totals.begin(), totals.end());
    for (long i = 0; i < count; ++i)
      if (totals[static_cast<std::size_t>(i)] != expected + i + 1)
        fail("the async results are not consecutive totals");
    expected += count;
    peak_tasks = std::max(peak_tasks, rep_tasks);
    peak_mib = std::max(peak_mib, rep_mib);

    start = steady::now();
    for (long i = 0; i < count; ++i)
      if (counter.add(1) != ++expected) fail("a sync result is wrong");
    sync_ms.push_back(ms_since(start));
    std::printf(
        "burst %d: %ld futures %.0f ms (threads peak %ld, RSS peak %.1f MiB); %ld sync "
        "%.0f ms\n",
        rep + 1, count, async_ms.back(), rep_tasks, rep_mib, count, sync_ms.back());
  }
  double a = median(async_ms), s = median(sync_ms);
  std::printf(
      "%ld outstanding futures: median %.0f ms (%.0f calls/s); baseline %ld sequential "
      "sync "
      "calls %.0f ms; ratio %.2f\n"
      "threads: idle %ld, peak with the futures outstanding %ld (+%ld)\n"
      "RSS: idle %.1f MiB, peak %.1f MiB (+%.1f MiB)\n",
      count, a, count / (a / 1000.0), count, s, a / s, idle_tasks, peak_tasks,
      peak_tasks - idle_tasks, idle_mib, peak_mib, peak_mib - idle_mib);
  return 0;
}
