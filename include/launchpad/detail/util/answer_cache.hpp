#pragma once

// The answers of a slow source, kept and handed out again (lp::cacher):
// at most one question to the source per key and refresh interval, however
// many threads ask, and never an answer older than max_staleness.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace lp::detail {

struct cache_timing {
  // Asking the source again sooner than this after its last answer (or
  // failure) is never done: the last answer is served instead.
  std::chrono::steady_clock::duration refresh;
  // An answer older than this is never served: an asker waits for a fresh
  // one. The age counts from when the source answered.
  std::chrono::steady_clock::duration max_staleness;
};

// Value must be copyable; the cache hands out copies of a shared answer, made
// outside its lock, so that a large answer does not hold up other askers.
template <class Value>
class answer_cache {
  using clock = std::chrono::steady_clock;

 public:
  explicit answer_cache(cache_timing timing) : timing_(timing) {}

  // The answer for `key`. The asker that finds no answer young enough asks
  // `fetch()` itself, on its own thread; askers who come while it waits are
  // served the last answer if it is within max_staleness, and otherwise wait
  // for that one question (no second one: no thundering herd). What fetch
  // throws reaches every asker who waited for it; for the refresh interval
  // after a failure, askers with no answer young enough get that failure
  // again rather than a question of their own, so a failing source is asked
  // no more often than a healthy one. An asker who would wait past
  // `give_up` (its caller's deadline) gets what `expired()` throws instead.
  template <class Fetch, class Expired>
  Value get(const std::string& key, clock::time_point give_up, Fetch&& fetch,
            Expired&& expired) {
    std::unique_lock lock(mutex_);
    if (entries_.size() > prune_above_ && !entries_.contains(key)) prune(clock::now());
    entry& e = entries_[key];
    auto now = clock::now();
    bool usable = e.answer && now - e.answered < timing_.max_staleness;
    if (e.answer && now - e.answered < timing_.refresh) return copy(e.answer, lock);
    if (!e.asking && (e.attempts == 0 || now - e.attempt_ended >= timing_.refresh))
      return ask(e, lock, std::forward<Fetch>(fetch));
    if (usable) return copy(e.answer, lock);
    if (e.asking) {
      auto attempts = e.attempts;
      ++e.waiting;
      bool came =
          answered_.wait_until(lock, give_up, [&] { return e.attempts != attempts; });
      --e.waiting;
      if (!came) {
        lock.unlock();
        expired();
      }
    }
    if (!e.failure) return copy(e.answer, lock);
    // A failure: the last answer stands in while it is still young enough.
    if (e.answer && clock::now() - e.answered < timing_.max_staleness)
      return copy(e.answer, lock);
    std::rethrow_exception(e.failure);
  }

 private:
  struct entry {
    std::shared_ptr<const Value> answer;
    clock::time_point answered;
    std::exception_ptr failure;  // of the last attempt, if it failed
    clock::time_point attempt_ended;
    std::uint64_t attempts = 0;  // ended ones
    bool asking = false;
    int waiting = 0;
  };

  template <class Fetch>
  Value ask(entry& e, std::unique_lock<std::mutex>& lock, Fetch&& fetch) {
    e.asking = true;
    lock.unlock();
    std::shared_ptr<const Value> answer;
    std::exception_ptr failure;
    try {
      answer = std::make_shared<const Value>(fetch());
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    e.asking = false;
    e.attempt_ended = clock::now();
    ++e.attempts;
    e.failure = failure;
    if (answer) {
      e.answer = answer;
      e.answered = e.attempt_ended;
    }
    answered_.notify_all();
    if (failure) {
      if (e.answer && e.attempt_ended - e.answered < timing_.max_staleness)
        return copy(e.answer, lock);
      std::rethrow_exception(failure);
    }
    return copy(e.answer, lock);
  }

  static Value copy(std::shared_ptr<const Value> answer,
                    std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    return *answer;
  }

  // Answers past max_staleness are never served: their keys are forgotten
  // once many keys were asked for, so that a cacher asked with ever new
  // arguments does not grow without end.
  void prune(clock::time_point now) {
    std::erase_if(entries_, [&](const auto& item) {
      const entry& e = item.second;
      return !e.asking && e.waiting == 0 &&
             now - e.attempt_ended >= timing_.max_staleness;
    });
    prune_above_ = std::max<std::size_t>(64, 2 * entries_.size());
  }

  const cache_timing timing_;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::map<std::string, entry> entries_;
  std::size_t prune_above_ = 64;
};

}  // namespace lp::detail
