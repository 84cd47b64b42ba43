#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "mapreduce.hpp"

int main(int argc, char** argv) {
  auto shards = mapreduce::sample_shards();
  std::string text;
  for (const auto& shard : shards) text += shard + "\n";

  lp::program p("mapreduce");
  // report() runs in the coordinator, which under local_mp is a process of
  // its own: what it prints appears behind the label [coordinator].
  mapreduce::make_program(p, shards, 3, 2, [text](const mapreduce::counts& counts) {
    // A check no real program needs: `meson test` runs this binary, and a
    // wrong count should fail it (an exception here fails the node).
    if (counts != mapreduce::count_words(text))
      throw std::runtime_error("the reducers' counts differ from a count on one thread");

    std::vector<std::pair<std::string, long>> top(counts.begin(), counts.end());
    std::stable_sort(top.begin(), top.end(),
                     [](auto& a, auto& b) { return a.second > b.second; });
    top.resize(std::min<std::size_t>(top.size(), 5));
    std::cout << counts.size() << " distinct words; the most frequent:";
    for (const auto& [word, n] : top) std::cout << " " << word << " " << n;
    std::cout << std::endl;
  });
  return lp::launch(p, argc, argv);
}
