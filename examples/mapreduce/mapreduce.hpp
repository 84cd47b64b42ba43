#pragma once
// Word count, MapReduce style. A coordinator hands text shards to a group of
// mappers; each mapper counts the words of its shard and sends every word to
// the reducer that owns it; the coordinator then gathers the reducers' totals.
#include <cctype>
#include <cstdint>
#include <functional>
#include <future>
#include <launchpad/launchpad.hpp>
#include <map>
#include <string>
#include <vector>

namespace mapreduce {

using counts = std::map<std::string, long>;

// Lower-case words: runs of letters and apostrophes.
inline counts count_words(const std::string& text) {
  counts words;
  std::string word;
  for (char c : text + " ") {
    if (std::isalpha(static_cast<unsigned char>(c)) || (c == '\'' && !word.empty())) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      ++words[word];
      word.clear();
    }
  }
  return words;
}

// Which reducer owns a word. Every mapper must pick the same reducer for the
// same word, also when mappers run in different processes, so the hash is
// spelled out (FNV-1a) rather than left to std::hash.
inline std::size_t owner(const std::string& word, std::size_t num_reducers) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : word) hash = (hash ^ c) * 1099511628211ull;
  return static_cast<std::size_t>(hash % num_reducers);
}

// Sums the partial counts of the words it owns. Mappers call add() at the same
// time, but a node runs one call at a time, so `total` needs no lock.
struct Reducer {
  counts total;
  void add(const counts& partial) {
    for (const auto& [word, n] : partial) total[word] += n;
  }
  counts result() const { return total; }
};
LP_SERVICE(Reducer, add, result);

// Counts the words of a shard and sends each reducer the words it owns.
struct Mapper {
  std::vector<lp::client<Reducer>> reducers;

  // Returns only once every reducer has its part: when all map() calls have
  // returned, the reducers' totals are complete.
  void map(const std::string& shard) {
    std::vector<counts> parts(reducers.size());
    for (const auto& [word, n] : count_words(shard))
      parts[owner(word, reducers.size())][word] = n;
    // One call per reducer, all in flight at once.
    std::vector<std::future<void>> sent;
    for (std::size_t r = 0; r < reducers.size(); ++r)
      if (!parts[r].empty()) sent.push_back(reducers[r].async.add(parts[r]));
    for (auto& done : sent) done.get();
  }
};
LP_SERVICE(Mapper, map);

struct Coordinator {
  std::vector<lp::client<Mapper>> mappers;
  std::vector<lp::client<Reducer>> reducers;
  std::vector<std::string> shards;
  std::function<void(const counts&)> report;

  void run() {
    // Map: deal the shards out round robin. A mapper given several shards
    // takes them one at a time, in whatever order they reach it.
    std::vector<std::future<void>> mapped;
    for (std::size_t i = 0; i < shards.size(); ++i)
      mapped.push_back(mappers[i % mappers.size()].async.map(shards[i]));
    for (auto& done : mapped) done.get();  // rethrows a mapper's failure

    // Reduce: each word has one owner, so the totals merge without adding.
    counts all;
    for (auto& reducer : reducers) all.merge(reducer.result());
    report(all);
    lp::stop();
  }
};
LP_SERVICE(Coordinator);

inline void make_program(lp::program& p, std::vector<std::string> shards, int num_mappers,
                         int num_reducers, std::function<void(const counts&)> report) {
  // Reducers first: the mappers and the coordinator are given their handles.
  std::vector<lp::handle<Reducer>> reducers;
  auto reducer_group = p.group("reducers");
  for (int i = 0; i < num_reducers; ++i)
    reducers.push_back(reducer_group.add_node<Reducer>());

  std::vector<lp::handle<Mapper>> mappers;
  auto mapper_group = p.group("mappers");
  for (int i = 0; i < num_mappers; ++i)
    mappers.push_back(mapper_group.add_node<Mapper>(reducers));

  p.add_node<Coordinator>("coordinator", mappers, reducers, std::move(shards),
                          std::move(report));
}

// A few shards of text for main() to count.
inline std::vector<std::string> sample_shards() {
  return {
      "A program is a graph of nodes, and the nodes talk to one another.",
      "The coordinator gives each mapper a shard of the text.",
      "Each mapper counts the words of its shard, and sends each word to the reducer "
      "that owns it.",
      "The reducer adds the counts it is sent; the coordinator gathers the counts of "
      "every reducer.",
      "The same program runs as threads in a test, or as one process for each node.",
      "A word has one owner, so no two reducers count the same word.",
  };
}

}  // namespace mapreduce
