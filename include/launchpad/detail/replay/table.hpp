#pragma once

// A replay node's tables: the items, their sampler and remover, the rate
// limiter, the waits it imposes, and the table's figures. lp::replay<Item>
// (replay.hpp) is the service around them.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iostream>
#include <launchpad/detail/replay/rate_limit.hpp>
#include <launchpad/detail/replay/selectors.hpp>
#include <launchpad/detail/replay/state.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <launchpad/metrics.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lp::detail {

struct table_spec {
  std::string name;
  selector_spec sampler, remover;
  std::uint64_t max_size = 0;
  std::uint64_t max_times_sampled = 0;  // 0: never removed for it
  limiter_spec limiter;
};

struct table_figures {
  std::string name;
  std::uint64_t size = 0, max_size = 0, inserts = 0, samples = 0, removed = 0;
  double insert_blocked_seconds = 0, sample_blocked_seconds = 0;
};

// A draw, with the item shared so that the copy a reply needs is made
// outside the table's lock.
template <class Item>
struct drawn {
  replay_key_type key;
  std::shared_ptr<const Item> item;
  double priority;
  double probability;
  std::uint64_t times_sampled;
};

template <class Item>
class replay_table {
  using clock = std::chrono::steady_clock;

 public:
  replay_table(table_spec spec, std::uint64_t seed,
               std::atomic<replay_key_type>& next_key, const std::atomic<bool>& stopping)
      : spec_(std::move(spec)),
        sampler_(make_selector(spec_.sampler)),
        limit_{spec_.limiter},
        rng_(seed),
        next_key_(next_key),
        stopping_(stopping) {
    // One index serves both when they pick alike: half the bookkeeping per item.
    if (spec_.remover.kind != spec_.sampler.kind)
      own_remover_ = make_selector(spec_.remover);
    remover_ = own_remover_ ? own_remover_.get() : sampler_.get();
  }

  const std::string& name() const { return spec_.name; }

  // Called in the node's scope, where metrics can be made.
  void record_metrics() {
    std::lock_guard lock(mutex_);
    auto prefix = "replay_" + spec_.name;
    metrics_.emplace(figures_metrics{lp::metrics::gauge(prefix + "_size"),
                                     lp::metrics::counter(prefix + "_inserts"),
                                     lp::metrics::counter(prefix + "_samples"),
                                     lp::metrics::counter(prefix + "_blocked_seconds")});
    metrics_->size.set(static_cast<double>(items_.size()));
  }

  // `method` (insert or insert_batch) names the call in what a mistake in
  // its arguments says.
  std::vector<replay_key_type> insert(std::vector<Item> items,
                                      std::vector<double> priorities,
                                      clock::time_point deadline,
                                      std::string_view method) {
    if (priorities.size() != items.size())
      bad_replay_argument(method, 3,
                          std::to_string(items.size()) + " items came with " +
                              std::to_string(priorities.size()) +
                              " priorities; give one priority per item");
    check_priorities(method, priorities);
    auto n = static_cast<std::uint64_t>(items.size());
    if (n == 0) return {};
    if (static_cast<double>(n) * spec_.limiter.samples_per_insert >
        spec_.limiter.max_diff - spec_.limiter.min_diff)
      bad_replay_argument(
          method, 2,
          "a batch of " + std::to_string(n) + " items is more than table '" + spec_.name +
              "''s rate limiter ever lets in at once; insert fewer at a time");
    std::vector<std::shared_ptr<const Item>> shared;
    shared.reserve(items.size());
    for (auto& item : items)
      shared.push_back(std::make_shared<const Item>(std::move(item)));

    std::unique_lock lock(mutex_);
    wait(
        lock, [&] { return limit_.can_insert(n, items_.size()); }, deadline,
        insert_blocked_, "insert");
    std::vector<replay_key_type> keys;
    keys.reserve(shared.size());
    for (std::size_t i = 0; i < shared.size(); ++i) {
      auto key = next_key_.fetch_add(1, std::memory_order_relaxed);
      add(key, std::move(shared[i]), priorities[i], 0);
      keys.push_back(key);
    }
    limit_.inserts += n;
    if (metrics_) {
      metrics_->inserts.add(static_cast<double>(n));
      metrics_->size.set(static_cast<double>(items_.size()));
    }
    lock.unlock();
    changed_.notify_all();
    return keys;
  }

  std::vector<drawn<Item>> sample(std::uint64_t n, clock::time_point deadline) {
    if (n == 0) return {};
    if (static_cast<double>(n) > spec_.limiter.max_diff - spec_.limiter.min_diff)
      bad_replay_argument("sample", 2,
                          std::to_string(n) + " samples at once are more than table '" +
                              spec_.name +
                              "''s rate limiter ever allows; sample fewer at a time");
    std::unique_lock lock(mutex_);
    wait(
        lock, [&] { return limit_.can_sample(n, items_.size()); }, deadline,
        sample_blocked_, "sample");
    std::vector<drawn<Item>> out;
    out.reserve(n);
    for (std::uint64_t i = 0; i < n && !items_.empty(); ++i) {
      auto chosen = sampler_->select(rng_);
      auto found = items_.find(chosen.key);
      auto& e = found->second;
      ++e.times_sampled;
      out.push_back(
          {chosen.key, e.item, e.priority, chosen.probability, e.times_sampled});
      if (spec_.max_times_sampled && e.times_sampled >= spec_.max_times_sampled)
        erase(found);
    }
    limit_.samples += out.size();
    if (metrics_) {
      metrics_->samples.add(static_cast<double>(out.size()));
      metrics_->size.set(static_cast<double>(items_.size()));
    }
    lock.unlock();
    changed_.notify_all();
    return out;
  }

  std::uint64_t update_priorities(const std::vector<replay_key_type>& keys,
                                  const std::vector<double>& priorities) {
    if (keys.size() != priorities.size())
      bad_replay_argument("update_priorities", 3,
                          std::to_string(keys.size()) + " keys came with " +
                              std::to_string(priorities.size()) +
                              " priorities; give one priority per key");
    check_priorities("update_priorities", priorities);
    std::lock_guard lock(mutex_);
    std::uint64_t updated = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      auto found = items_.find(keys[i]);
      if (found == items_.end()) continue;
      double old = found->second.priority;
      sampler_->update(keys[i], old, priorities[i]);
      if (own_remover_) own_remover_->update(keys[i], old, priorities[i]);
      found->second.priority = priorities[i];
      ++updated;
    }
    return updated;
  }

  std::uint64_t remove(const std::vector<replay_key_type>& keys) {
    std::unique_lock lock(mutex_);
    std::uint64_t removed = 0;
    for (auto key : keys) {
      auto found = items_.find(key);
      if (found == items_.end()) continue;
      erase(found);
      ++removed;
    }
    if (metrics_) metrics_->size.set(static_cast<double>(items_.size()));
    lock.unlock();
    // A smaller table may let an insert below min_size go.
    changed_.notify_all();
    return removed;
  }

  table_figures figures() const {
    std::lock_guard lock(mutex_);
    return {spec_.name,     items_.size(), spec_.max_size,  limit_.inserts,
            limit_.samples, removed_,      insert_blocked_, sample_blocked_};
  }

  saved_table<Item> save() const {
    std::lock_guard lock(mutex_);
    saved_table<Item> out{spec_.name, {}, limit_.inserts, limit_.samples, removed_};
    out.items.reserve(items_.size());
    for (auto& [key, e] : items_)
      out.items.push_back({key, *e.item, e.priority, e.times_sampled});
    std::sort(out.items.begin(), out.items.end(),
              [](const auto& a, const auto& b) { return a.key < b.key; });
    return out;
  }

  void restore(saved_table<Item> saved) {
    std::unique_lock lock(mutex_);
    while (!items_.empty()) erase(items_.begin());
    for (auto& item : saved.items)
      add(item.key, std::make_shared<const Item>(std::move(item.item)),
          checked_priority(item.priority), item.times_sampled);
    limit_.inserts = saved.inserts;
    limit_.samples = saved.samples;
    removed_ = saved.removed;
    if (metrics_) metrics_->size.set(static_cast<double>(items_.size()));
    lock.unlock();
    changed_.notify_all();
  }

  // Wakes the waiting calls, which see that the program stops.
  void wake() {
    { std::lock_guard lock(mutex_); }
    changed_.notify_all();
  }

 private:
  struct entry {
    std::shared_ptr<const Item> item;
    double priority;
    std::uint64_t times_sampled;
  };
  struct figures_metrics {
    lp::metrics::gauge size;
    lp::metrics::counter inserts, samples, blocked_seconds;
  };

  // Makes room first: the remover picks among the items already in.
  void add(replay_key_type key, std::shared_ptr<const Item> item, double priority,
           std::uint64_t times_sampled) {
    while (!items_.empty() && items_.size() >= spec_.max_size)
      erase(items_.find(remover_->select(rng_).key));
    items_.emplace(key, entry{std::move(item), priority, times_sampled});
    sampler_->insert(key, priority);
    if (own_remover_) own_remover_->insert(key, priority);
  }

  void erase(typename std::unordered_map<replay_key_type, entry>::iterator at) {
    sampler_->remove(at->first, at->second.priority);
    if (own_remover_) own_remover_->remove(at->first, at->second.priority);
    items_.erase(at);
    ++removed_;
  }

  // A call the limiter holds back ends at its caller's deadline (the caller
  // sees lp::deadline_exceeded) or when the program stops (lp::stopping):
  // the node's protocol answers, so that a caller that still waits hears
  // why.
  template <class Allowed>
  void wait(std::unique_lock<std::mutex>& lock, Allowed allowed,
            clock::time_point deadline, double& blocked_seconds, const char* call) {
    if (allowed()) return;
    auto start = clock::now();
    struct count_blocked {
      replay_table& table;
      clock::time_point start;
      double& seconds;
      ~count_blocked() {
        double waited = std::chrono::duration<double>(clock::now() - start).count();
        seconds += waited;
        if (table.metrics_) table.metrics_->blocked_seconds.add(waited);
      }
    } counting{*this, start, blocked_seconds};
    while (!allowed()) {
      if (stopping_.load())
        throw call_failure(503, protocol::error::stopping,
                           std::string("table '") + spec_.name + "': a " + call +
                               " waiting on the rate limiter ended: the program stops");
      if (clock::now() >= deadline)
        throw call_failure(
            504, protocol::error::deadline_exceeded,
            std::string("table '") + spec_.name + "': a " + call +
                " waited on the rate limiter until the caller's deadline (" +
                limiter_state() +
                "); give the call a longer deadline (with_deadline), or check that its "
                "counterpart (samples for an insert, inserts for a sample) is running");
      if (deadline == clock::time_point::max())
        changed_.wait(lock);
      else
        changed_.wait_until(lock, deadline);
    }
  }

  std::string limiter_state() const {
    return "size " + std::to_string(items_.size()) + ", inserts " +
           std::to_string(limit_.inserts) + ", samples " + std::to_string(limit_.samples);
  }

  const table_spec spec_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<replay_key_type, entry> items_;
  std::unique_ptr<selector> sampler_, own_remover_;
  selector* remover_;
  rate_limit limit_;
  std::mt19937_64 rng_;
  std::uint64_t removed_ = 0;
  double insert_blocked_ = 0, sample_blocked_ = 0;
  std::optional<figures_metrics> metrics_;
  std::atomic<replay_key_type>& next_key_;
  const std::atomic<bool>& stopping_;
};

inline bool metric_word(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  });
}

// A node's tables, by name.
template <class Item>
class replay_tables {
 public:
  replay_tables(const std::vector<table_spec>& specs, std::uint64_t seed) {
    if (specs.empty())
      throw usage_error(
          "lp::replay needs at least one table: give replay_config{.tables = "
          "{{.name = \"...\", ...}}}");
    if (seed == 0)
      seed = std::random_device()() | (std::uint64_t(std::random_device()()) << 32);
    std::uint64_t index = 0;
    for (auto& spec : specs) {
      if (!metric_word(spec.name))
        throw usage_error(
            "lp::replay: the table name '" + spec.name +
            "' must be letters, digits and _, not starting with a digit (it "
            "names the table's metrics)");
      if (spec.max_size == 0)
        throw usage_error("lp::replay: table '" + spec.name +
                          "' has max_size 0; give it room");
      for (auto& t : tables_)
        if (t->name() == spec.name)
          throw usage_error("lp::replay: two tables are named '" + spec.name +
                            "'; give each its own name");
      tables_.push_back(std::make_unique<replay_table<Item>>(
          spec, seed + 0x9e3779b97f4a7c15ULL * ++index, next_key_, stopping_));
    }
  }

  // The table a call to `method` names (its first argument).
  replay_table<Item>& find(const std::string& name, std::string_view method) {
    for (auto& t : tables_)
      if (t->name() == name) return *t;
    std::string names;
    for (auto& t : tables_) names += (names.empty() ? "'" : ", '") + t->name() + "'";
    bad_replay_argument(
        method, 1, "there is no table named '" + name + "'; its tables are " + names);
  }

  template <class F>
  void for_each(F f) const {
    for (auto& t : tables_) f(*t);
  }

  void record_metrics() {
    for (auto& t : tables_) t->record_metrics();
  }

  void stop() {
    stopping_ = true;
    for (auto& t : tables_) t->wake();
  }

  replay_state<Item> save() const {
    replay_state<Item> state{next_key_.load(), {}};
    for (auto& t : tables_) state.tables.push_back(t->save());
    return state;
  }

  void restore(replay_state<Item> state) {
    for (auto& saved : state.tables) {
      auto found = std::find_if(tables_.begin(), tables_.end(),
                                [&](auto& t) { return t->name() == saved.name; });
      if (found == tables_.end()) {
        std::cerr
            << "lp::replay: the checkpoint's table '" << saved.name << "' ("
            << saved.items.size()
            << " items) is no longer in the node's configuration; its items are dropped"
            << std::endl;
        continue;
      }
      (*found)->restore(std::move(saved));
    }
    auto next = next_key_.load();
    next_key_ = std::max(next, state.next_key);
  }

 private:
  std::atomic<replay_key_type> next_key_{1};
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<replay_table<Item>>> tables_;
};

}  // namespace lp::detail
