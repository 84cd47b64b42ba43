#pragma once

// How a table picks an item: to sample it (its sampler) or to drop it when
// full (its remover). Each selector keeps its own index of the table's keys,
// told of every insert, removal and priority change.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <launchpad/detail/replay/sum_tree.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lp::detail {

enum class selector_kind { uniform, fifo, lifo, prioritized, max_heap, min_heap };

struct selector_spec {
  selector_kind kind = selector_kind::uniform;
  double alpha = 1;  // prioritized only
};

inline double checked_alpha(double alpha) {
  if (!(alpha >= 0) || !std::isfinite(alpha))
    throw usage_error("lp::sampler::prioritized(" + std::to_string(alpha) +
                      "): alpha must be a finite number >= 0 (0 samples uniformly, 1 in "
                      "proportion to priority)");
  return alpha;
}

// A mistake in argument `argument` (from 1) of a call to lp::replay's
// `method`: while the node answers a call (over HTTP or direct), the
// caller's bad request, 400 bad_request as an argument of the wrong type
// is; on a plain object, lp::usage_error.
[[noreturn]] inline void bad_replay_argument(std::string_view method, int argument,
                                             const std::string& reason) {
  auto message = "argument " + std::to_string(argument) + " of " + std::string(method) +
                 ": " + reason;
  if (handlers_on_this_thread() > 0)
    throw call_failure(400, protocol::error::bad_request, message);
  throw usage_error("lp::replay: " + message);
}

// -1, nan, inf: as a caller would write it.
inline std::string number_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

inline bool valid_priority(double priority) {
  return priority >= 0 && std::isfinite(priority);
}

// Checks the priorities given to `method`: its third argument, in each
// method that takes priorities.
inline void check_priorities(std::string_view method,
                             const std::vector<double>& priorities) {
  for (std::size_t i = 0; i < priorities.size(); ++i)
    if (!valid_priority(priorities[i]))
      bad_replay_argument(
          method, 3,
          (priorities.size() == 1 ? std::string("the priority")
                                  : "priority " + std::to_string(i + 1) + " of " +
                                        std::to_string(priorities.size())) +
              " is " + number_text(priorities[i]) +
              "; priorities must be finite numbers >= 0");
}

// A checkpoint's priority.
inline double checked_priority(double priority) {
  if (!valid_priority(priority))
    throw usage_error("lp::replay: a priority of " + number_text(priority) +
                      " was given; priorities must be finite numbers >= 0");
  return priority;
}

using replay_key_type = std::uint64_t;

struct selection {
  replay_key_type key;
  double probability;
};

class selector {
 public:
  virtual ~selector() = default;
  virtual void insert(replay_key_type key, double priority) = 0;
  virtual void remove(replay_key_type key, double priority) = 0;
  virtual void update(replay_key_type key, double old_priority, double priority) = 0;
  // The table holds at least one item.
  virtual selection select(std::mt19937_64& rng) const = 0;
};

// Keys come in increasing order, so the set's order is insertion order.
class ordered_selector final : public selector {
 public:
  explicit ordered_selector(bool newest) : newest_(newest) {}
  void insert(replay_key_type key, double) override { keys_.insert(keys_.end(), key); }
  void remove(replay_key_type key, double) override { keys_.erase(key); }
  void update(replay_key_type, double, double) override {}
  selection select(std::mt19937_64&) const override {
    return {newest_ ? *keys_.rbegin() : *keys_.begin(), 1.0};
  }

 private:
  bool newest_;
  std::set<replay_key_type> keys_;
};

// Dense positions, so that a draw is one random index; a removal moves the
// last key into the hole.
class dense_keys {
 public:
  std::size_t size() const { return keys_.size(); }
  replay_key_type at(std::size_t i) const { return keys_[i]; }
  std::size_t push_back(replay_key_type key) {
    position_.emplace(key, keys_.size());
    keys_.push_back(key);
    return keys_.size() - 1;
  }
  // Returns the position the key held; the last key now holds it.
  std::size_t swap_remove(replay_key_type key) {
    auto found = position_.find(key);
    std::size_t i = found->second;
    position_.erase(found);
    if (i + 1 != keys_.size()) {
      keys_[i] = keys_.back();
      position_[keys_[i]] = i;
    }
    keys_.pop_back();
    return i;
  }
  std::size_t position(replay_key_type key) const { return position_.at(key); }

 private:
  std::vector<replay_key_type> keys_;
  std::unordered_map<replay_key_type, std::size_t> position_;
};

class uniform_selector final : public selector {
 public:
  void insert(replay_key_type key, double) override { keys_.push_back(key); }
  void remove(replay_key_type key, double) override { keys_.swap_remove(key); }
  void update(replay_key_type, double, double) override {}
  selection select(std::mt19937_64& rng) const override {
    std::uniform_int_distribution<std::size_t> pick(0, keys_.size() - 1);
    return {keys_.at(pick(rng)), 1.0 / static_cast<double>(keys_.size())};
  }

 private:
  dense_keys keys_;
};

// Item i with probability p_i^alpha / sum_j p_j^alpha; uniformly while
// every priority is 0.
class prioritized_selector final : public selector {
 public:
  explicit prioritized_selector(double alpha) : alpha_(alpha) {}
  void insert(replay_key_type key, double priority) override {
    keys_.push_back(key);
    tree_.push_back(weight(priority));
  }
  void remove(replay_key_type key, double) override {
    tree_.swap_remove(keys_.swap_remove(key));
  }
  void update(replay_key_type key, double, double priority) override {
    tree_.set(keys_.position(key), weight(priority));
  }
  selection select(std::mt19937_64& rng) const override {
    double total = tree_.total();
    if (!(total > 0)) {
      std::uniform_int_distribution<std::size_t> pick(0, keys_.size() - 1);
      return {keys_.at(pick(rng)), 1.0 / static_cast<double>(keys_.size())};
    }
    std::uniform_real_distribution<double> draw(0.0, total);
    auto i = tree_.find(draw(rng));
    return {keys_.at(i), tree_.weight(i) / total};
  }

 private:
  double weight(double priority) const {
    // 0^0 is 1 in std::pow: alpha 0 is uniform, zero priorities included.
    return std::pow(priority, alpha_);
  }
  double alpha_;
  dense_keys keys_;
  sum_tree tree_;
};

// The highest (or lowest) priority; among equals, the oldest.
class heap_selector final : public selector {
 public:
  explicit heap_selector(bool highest) : highest_(highest) {}
  void insert(replay_key_type key, double priority) override {
    order_.emplace(rank(priority), key);
  }
  void remove(replay_key_type key, double priority) override {
    order_.erase({rank(priority), key});
  }
  void update(replay_key_type key, double old_priority, double priority) override {
    order_.erase({rank(old_priority), key});
    order_.emplace(rank(priority), key);
  }
  selection select(std::mt19937_64&) const override {
    return {order_.begin()->second, 1.0};
  }

 private:
  double rank(double priority) const { return highest_ ? -priority : priority; }
  bool highest_;
  std::set<std::pair<double, replay_key_type>> order_;
};

inline std::unique_ptr<selector> make_selector(const selector_spec& spec) {
  switch (spec.kind) {
    case selector_kind::uniform:
      return std::make_unique<uniform_selector>();
    case selector_kind::fifo:
      return std::make_unique<ordered_selector>(false);
    case selector_kind::lifo:
      return std::make_unique<ordered_selector>(true);
    case selector_kind::prioritized:
      return std::make_unique<prioritized_selector>(spec.alpha);
    case selector_kind::max_heap:
      return std::make_unique<heap_selector>(true);
    case selector_kind::min_heap:
      return std::make_unique<heap_selector>(false);
  }
  return std::make_unique<uniform_selector>();
}

}  // namespace lp::detail
