#pragma once
// A consumer fans work out to a group of producers with futures, sums what
// they return, reports it and stops the program.
#include <functional>
#include <future>
#include <launchpad/launchpad.hpp>
#include <vector>

namespace consumer_producers {
struct Producer {
  // Squares of the numbers [from, to): work that takes a while.
  long work(long from, long to) const {
    long sum = 0;
    for (long i = from; i < to; ++i) sum += i * i;
    return sum;
  }
};
LP_SERVICE(Producer, work);

struct Consumer {
  std::vector<lp::client<Producer>> producers;
  long items;
  std::function<void(long)> report;

  void run() {
    std::vector<std::future<long>> pending;
    long share = items / static_cast<long>(producers.size());
    for (std::size_t i = 0; i < producers.size(); ++i) {
      long from = static_cast<long>(i) * share;
      long to = i + 1 == producers.size() ? items : from + share;
      pending.push_back(producers[i].async.work(from, to));
    }
    long total = 0;
    for (auto& result : pending) total += result.get();
    report(total);
    lp::stop();
  }
};
LP_SERVICE(Consumer);

inline void make_program(lp::program& p, int num_producers, long items,
                         std::function<void(long)> report) {
  std::vector<lp::handle<Producer>> producers;
  auto group = p.group("producers");
  for (int i = 0; i < num_producers; ++i) producers.push_back(group.add_node<Producer>());
  p.add_node<Consumer>("consumer", producers, items, std::move(report));
}
}  // namespace consumer_producers
