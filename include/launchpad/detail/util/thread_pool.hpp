#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <launchpad/detail/util/malloc_tuning.hpp>
#include <launchpad/detail/util/spare_vectors.hpp>
#include <limits>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace lp::detail {

// A pool that starts a thread whenever every thread is busy, up to a bound,
// and lets a thread go once it has been idle for `idle_limit`: the threads
// follow the load up and back down. A node's server runs its connections on
// one (serve/listener.hpp says why); client futures run on call_pool().
//
// Two kinds of job. An ordinary job (enqueue) runs when fewer than
// `max_busy` ordinary jobs are running; the others wait in a queue, in order,
// holding no thread. An urgent job (enqueue_urgent) is taken first and may
// use any thread up to `max_threads`. Without a `max_busy` the two are the
// same.
class thread_pool {
 public:
  explicit thread_pool(std::size_t max_threads,
                       std::chrono::milliseconds idle_limit = std::chrono::seconds(2),
                       std::size_t max_busy = std::numeric_limits<std::size_t>::max())
      : max_threads_(max_threads), max_busy_(max_busy), idle_limit_(idle_limit) {}
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() { shutdown(); }

  void enqueue(std::function<void()> job) { add(std::move(job), jobs_); }
  void enqueue_urgent(std::function<void()> job) { add(std::move(job), urgent_); }

  // Runs the jobs already queued, then joins every thread.
  void shutdown() {
    std::list<std::thread> threads;
    std::vector<std::thread> retired;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      threads.swap(threads_);
      retired.swap(retired_);
    }
    ready_.notify_all();
    for (auto& thread : threads) thread.join();
    for (auto& thread : retired) thread.join();
  }

  // Threads alive now, busy or idle.
  std::size_t threads() {
    std::lock_guard lock(mutex_);
    return threads_.size();
  }

 private:
  // Jobs a thread could start now: every urgent one, and the ordinary ones
  // that fit under max_busy.
  std::size_t startable() const {
    std::size_t room = busy_ < max_busy_ ? max_busy_ - busy_ : 0;
    return urgent_.size() + std::min(jobs_.size(), room);
  }

  void add(std::function<void()> job, std::deque<std::function<void()>>& queue) {
    std::vector<std::thread> retired;
    {
      std::lock_guard lock(mutex_);
      queue.push_back(std::move(job));
      // Threads started but not yet waiting will take a job as idle ones
      // do: without them, a burst would start a thread for every job.
      if (startable() > idle_ + starting_ && threads_.size() < max_threads_) {
        ++starting_;
        // The thread finds its own place in the list, to leave it when idle.
        auto place = threads_.emplace(threads_.end());
        *place = std::thread([this, place] { work(place); });
      }
      retired.swap(retired_);
    }
    ready_.notify_one();
    for (auto& thread : retired) thread.join();
  }

  void work(std::list<std::thread>::iterator place) {
    std::unique_lock lock(mutex_);
    --starting_;
    for (;;) {
      ++idle_;
      bool woken = ready_.wait_for(lock, idle_limit_,
                                   [&] { return stopping_ || startable() > 0; });
      --idle_;
      if (!woken) {
        // Idle too long: leave. The next enqueue (or shutdown) joins us.
        retired_.push_back(std::move(*place));
        threads_.erase(place);
        lock.unlock();
        spare::let_go();        // a load has gone: so have its large vectors
        pool_thread_leaving();  // what this thread holds goes back to the kernel
        return;
      }
      // When stopping, the queued jobs all run, whatever max_busy says.
      bool ordinary = urgent_.empty();
      auto& queue = ordinary ? jobs_ : urgent_;
      if (queue.empty()) return;  // stopping, nothing left
      auto job = std::move(queue.front());
      queue.pop_front();
      if (ordinary) ++busy_;
      lock.unlock();
      job();
      job = nullptr;  // what it holds goes before the next job
      lock.lock();
      if (ordinary) --busy_;
    }
  }

  const std::size_t max_threads_;
  const std::size_t max_busy_;
  const std::chrono::milliseconds idle_limit_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;    // ordinary, waiting
  std::deque<std::function<void()>> urgent_;  // urgent, waiting
  std::list<std::thread> threads_;
  std::vector<std::thread> retired_;  // left, not yet joined
  std::size_t idle_ = 0;
  std::size_t starting_ = 0;  // started, not yet in work()
  std::size_t busy_ = 0;      // ordinary jobs running
  bool stopping_ = false;
};

// How many node methods this thread is running now (a handler over HTTP,
// or a direct call): serve/ counts them (handler_scope).
inline int& handlers_on_this_thread() {
  thread_local int running = 0;
  return running;
}

struct handler_scope {
  handler_scope() { ++handlers_on_this_thread(); }
  ~handler_scope() { --handlers_on_this_thread(); }
  handler_scope(const handler_scope&) = delete;
  handler_scope& operator=(const handler_scope&) = delete;
};

// The process-wide pool behind client futures (call/caller.hpp).
// Process-wide on purpose: the bounds below are what a process spends on
// futures, whatever number of clients and launches it has; a pool per client
// or per launch would multiply them. docs/concepts.md ("Outstanding futures
// are bounded in threads") tells users. Its threads leave after 2 s idle, so
// a process that makes no futures holds none.
//
// A future's call holds a pool thread, blocked on its socket, for its round
// trip. At most call_pool_busy (64) futures are in flight at once; the
// others wait in a queue in the order they were made, holding a few hundred
// bytes and no thread, socket or connection, their deadline running. So N
// outstanding futures take at most 64 threads here, and at most 64
// connections (and server threads) at the nodes, whatever N is.
//
// The queue must not deadlock a node's method that waits on futures of its
// own: the calls queued ahead of them may be waiting for that very method
// (one node, one call at a time). A future made while this thread runs a
// node's method (handlers_on_this_thread) is urgent: it goes ahead of the
// queue and may start a thread of its own, up to call_pool_threads (256) in
// all. Only chains of nested calls that keep more than that many threads
// busy at once can still wait on each other, until their deadlines.
//
// Why not an event loop, one thread for every socket: a call may wait for a
// node that does not serve yet, or reconnect, and its reply is decoded into
// the caller's type, all of which a blocking round trip does simply; 64
// in flight already keep two cores busy.
inline constexpr std::size_t call_pool_busy = 64;
inline constexpr std::size_t call_pool_threads = 256;

inline thread_pool& call_pool() {
  static thread_pool pool(call_pool_threads, std::chrono::seconds(2), call_pool_busy);
  return pool;
}

}  // namespace lp::detail
