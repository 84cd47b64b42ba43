// The program the observability tests run (tests/observe/*.py): a counter the
// tests call, which logs each call on std::cerr from its handler, a recorder
// whose run() records a series, a counter and gauges (one with all the digits
// of a double, which the page must round) and prints a log line with HTML in
// it on std::cout (which the status page must show as text) and one longer
// than any card is wide, and a group of workers, with no method of their
// own, that call the recorder, so that the graph has edges and groups.
// Under local_mt too the page shows both nodes' lines: they write through
// the C++ streams.
//
//   observe_program [--lp_launch=local_mp] [--lp_... flags]
//
// It runs until it is stopped.
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <launchpad/launchpad.hpp>
#include <string>

namespace observe {

struct Counter {
  long add(long x) {
    std::cerr << "add(" << x << ")" << std::endl;
    return total += x;
  }
  long total = 0;
};
LP_SERVICE(Counter, add);

struct Recorder {
  long ping() { return ++pings; }
  // Never called: a method name as long as real services have, in the
  // page's table of methods.
  long sample_prioritized_batch() { return pings; }
  void run() {
    std::cout << "<img src=x onerror=\"document.body.dataset.pwned='yes'\"><script>"
                 "document.body.dataset.pwned='yes'</script> & friends"
              << std::endl;
    std::cout << "a long line, as a path or a traceback makes: " << std::string(300, '=')
              << " the end of the long line" << std::endl;
    lp::metrics::gauge("weights_norm").set(7.27018181433132);
    lp::metrics::series wave("wave");
    lp::metrics::counter ticks("ticks");
    for (int i = 0; !lp::wait_for_stop(std::chrono::milliseconds(100)); ++i) {
      wave.record(std::sin(i / 5.0));
      ticks.add(1);
      lp::metrics::gauge("pings_seen").set(static_cast<double>(pings));
    }
  }
  std::atomic<long> pings{0};
};
LP_SERVICE(Recorder, ping, sample_prioritized_batch);

struct Worker {
  lp::client<Recorder> recorder;
  void run() {
    while (!lp::wait_for_stop(std::chrono::milliseconds(50))) recorder.ping();
  }
};
LP_SERVICE(Worker);

}  // namespace observe

int main(int argc, char** argv) {
  lp::program p("observe");
  p.add_node<observe::Counter>("counter");
  auto recorder = p.add_node<observe::Recorder>("recorder");
  auto workers = p.group("workers");
  for (int i = 0; i < 2; ++i) workers.add_node<observe::Worker>(recorder);
  return lp::launch<lp::local_multi_processing>(p, argc, argv);
}
