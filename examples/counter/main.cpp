#include <iostream>
#include <launchpad/launchpad.hpp>

struct Counter {
  long add(long x) { return total += x; }
  long get() const { return total; }
  ~Counter() { std::cout << "total: " << total << std::endl; }  // when the program ends
  long total = 0;
};
LP_SERVICE(Counter, add, get);

struct Producer {
  lp::client<Counter> counter;  // filled from a handle
  int n;
  void run() {
    for (int i = 0; i < n; ++i) counter.add(1);
  }
};
LP_SERVICE(Producer);  // no remote methods, has run()

int main(int argc, char** argv) {
  lp::program p("counter");
  auto c = p.add_node<Counter>("counter");
  auto producers = p.group("producers");
  for (int i = 0; i < 4; ++i) producers.add_node<Producer>(c, 1000);
  return lp::launch<lp::local_multi_threading>(p, argc, argv);
}
