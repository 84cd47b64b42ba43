// One small sync call, N times: the program that benchmarks/profile_call.py
// runs under strace, perf and callgrind to count what a call costs.
//
//   profile_call CALLS [--tls] [--echo]
//
// A Counter's add(long) under test_multi_threading, so that client and
// server are threads of this one process and a profile sees both sides.
// 1000 calls warm up first; the profile takes the difference of two runs
// with different CALLS, which cancels the launch and the warm-up.
// --echo calls echo(std::vector<float>) of 1M float32 instead, as
// bench_calls' row 3 does (20 calls warm up), for perf record: see
// benchmarks/README.md, "Bulk arguments by value".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <launchpad/launchpad.hpp>
#include <string_view>
#include <vector>

struct Counter {
  long add(long x) { return total += x; }
  std::vector<float> echo(std::vector<float> values) { return values; }
  long total = 0;
};
LP_SERVICE(Counter, add, echo);

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 0;
  bool tls = false, echo = false, usage = calls <= 0;
  for (int i = 2; i < argc; ++i) {
    std::string_view flag = argv[i];
    tls |= flag == "--tls";
    echo |= flag == "--echo";
    usage |= flag != "--tls" && flag != "--echo";
  }
  if (usage) {
    std::fprintf(stderr, "usage: %s CALLS [--tls] [--echo]\n", argv[0]);
    return 2;
  }
  lp::program p("profile");
  auto counter = p.add_node<Counter>("counter");
  auto running = lp::launch<lp::test_multi_threading>(p, {.tls = tls});
  auto client = running.client(counter);
  std::vector<float> values(echo ? std::size_t{1} << 20 : 0);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.001f;
  auto call = [&] {
    if (!echo) {
      client.add(1);
    } else if (client.echo(values).size() != values.size()) {
      std::abort();
    }
  };
  for (int i = 0; i < (echo ? 20 : 1000); ++i) call();
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) call();
  auto elapsed = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "profile_call: %ld calls, %.1f us/call\n", calls,
               std::chrono::duration<double, std::micro>(elapsed).count() /
                   static_cast<double>(calls));
  return running.stop() ? 0 : 1;
}
