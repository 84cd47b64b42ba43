// One small sync call, N times: the program that benchmarks/profile_call.py
// runs under strace, perf and callgrind to count what a call costs.
//
//   profile_call CALLS [--tls]
//
// A Counter's add(long) under test_multi_threading, so that client and
// server are threads of this one process and a profile sees both sides.
// 1000 calls warm up first; the profile takes the difference of two runs
// with different CALLS, which cancels the launch and the warm-up.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <launchpad/launchpad.hpp>
#include <string_view>

struct Counter {
  long add(long x) { return total += x; }
  long total = 0;
};
LP_SERVICE(Counter, add);

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 0;
  bool tls = argc > 2 && std::string_view(argv[2]) == "--tls";
  if (calls <= 0) {
    std::fprintf(stderr, "usage: %s CALLS [--tls]\n", argv[0]);
    return 2;
  }
  lp::program p("profile");
  auto counter = p.add_node<Counter>("counter");
  auto running = lp::launch<lp::test_multi_threading>(p, {.tls = tls});
  auto client = running.client(counter);
  for (int i = 0; i < 1000; ++i) client.add(1);
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) client.add(1);
  auto elapsed = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "profile_call: %ld calls, %.1f us/call\n", calls,
               std::chrono::duration<double, std::micro>(elapsed).count() /
                   static_cast<double>(calls));
  return running.stop() ? 0 : 1;
}
