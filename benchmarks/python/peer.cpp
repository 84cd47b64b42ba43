// The C++ side of benchmarks/python/bench_client.py: a node "bench" with the
// methods of bench_calls.cpp (add, echo), and a node "driver" whose methods
// time the C++ client calling "bench", so that the Python benchmark can run
// the C++ figures interleaved with its own, in the same run.
//
//   python_bench_peer [--lp_launch=local_mt]    (runs until stopped)
#include <chrono>
#include <launchpad/launchpad.hpp>
#include <stdexcept>
#include <vector>

namespace python_bench {

using steady = std::chrono::steady_clock;

struct Bench {
  long add(long x) { return total += x; }
  std::vector<float> echo(const std::vector<float>& values) { return values; }
  long total = 0;
};
LP_SERVICE(Bench, add, echo);  // before lp::client<Bench> below

struct Driver {
  lp::client<Bench> bench;

  // Microseconds of each of `n` blocking add(1) calls.
  std::vector<double> small_calls(int n) {
    std::vector<double> us;
    for (int i = 0; i < n; ++i) {
      auto start = steady::now();
      bench.add(1);
      us.push_back(
          std::chrono::duration<double, std::micro>(steady::now() - start).count());
    }
    return us;
  }

  // Milliseconds of each of `n` echoes of `count` float32, checked.
  std::vector<double> echoes(int n, long count) {
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      auto start = steady::now();
      auto back = bench.echo(values);
      ms.push_back(
          std::chrono::duration<double, std::milli>(steady::now() - start).count());
      if (back != values) throw std::runtime_error("the echo differs from what was sent");
    }
    return ms;
  }
};
LP_SERVICE(Driver, small_calls, echoes);

}  // namespace python_bench

int main(int argc, char** argv) {
  lp::program p("python_bench");
  auto bench = p.add_node<python_bench::Bench>("bench");
  p.add_node<python_bench::Driver>("driver", bench);
  return lp::launch<lp::local_multi_threading>(p, argc, argv);
}
