#pragma once

// The callers of a batched method wait here until a batch forms: max_batch
// of them, or whoever came within max_wait of the oldest. One of the waiting
// threads then runs the method once for the whole batch and hands each
// caller its own result. No thread of its own: the batch runs on a caller's.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <launchpad/detail/observe/call_metrics.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace lp::detail {

struct batch_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a node keeps for each batched method.
class batch_queue_base {
 public:
  virtual ~batch_queue_base() = default;
  // The method's figures, where the size of each batch is counted; set
  // before the node serves.
  method_calls* calls = nullptr;
};

template <class T, class Method>
class batch_queue final : public batch_queue_base {
  using traits = signature<Method>;
  using element_args = typename traits::params;
  using clock = std::chrono::steady_clock;
  // What one caller gets: std::monostate for a void method.
  using result_type = std::conditional_t<std::is_void_v<typename traits::result>,
                                         std::monostate, typename traits::result>;

  struct pending {
    element_args args;
    clock::time_point arrived;
    std::optional<result_type> result;
    std::exception_ptr error;
    bool done = false;
  };

 public:
  // Returns this caller's result, or rethrows what the batch threw.
  result_type call(T& object, element_args args, std::mutex* serial) {
    pending me{std::move(args), clock::now(), std::nullopt, nullptr, false};
    std::unique_lock lock(mutex_);
    waiting_.push_back(&me);
    changed_.notify_all();
    while (!me.done) {
      if (!running_ && !waiting_.empty() &&
          (waiting_.size() >= limits().max_batch || clock::now() >= due())) {
        std::vector<pending*> batch;
        while (!waiting_.empty() && batch.size() < limits().max_batch) {
          batch.push_back(waiting_.front());
          waiting_.pop_front();
        }
        running_ = true;
        lock.unlock();
        if (calls) calls->mine().batch_sizes.add(batch.size(), batch_bounds);
        run(object, batch, serial);
        lock.lock();
        running_ = false;
        for (auto* caller : batch) caller->done = true;
        changed_.notify_all();
      } else if (running_ || waiting_.empty()) {
        changed_.wait(lock);
      } else {
        changed_.wait_until(lock, due());
      }
    }
    if (me.error) std::rethrow_exception(me.error);
    return std::move(*me.result);
  }

 private:
  static constexpr batch_limits limits() {
    return lp_batch_limits(lp_batch_tag<Method>{});
  }

  clock::time_point due() const { return waiting_.front()->arrived + limits().max_wait; }

  static void run(T& object, const std::vector<pending*>& batch, std::mutex* serial) {
    try {
      auto columns = [&]<std::size_t... I>(std::index_sequence<I...>) {
        typename traits::batch_params out;
        ((std::get<I>(out).reserve(batch.size())), ...);
        for (auto* caller : batch)
          ((std::get<I>(out).push_back(std::move(std::get<I>(caller->args)))), ...);
        return out;
      }
      (std::make_index_sequence<traits::arity>{});
      std::unique_lock<std::mutex> turn;
      if (serial) turn = std::unique_lock(*serial);
      auto apply = [&](auto&... column) -> decltype(auto) {
        return (object.*Method::pointer)(std::move(column)...);
      };
      if constexpr (std::is_void_v<typename traits::result>) {
        std::apply(apply, columns);
        for (auto* caller : batch) caller->result.emplace();
      } else {
        auto results = std::apply(apply, columns);
        if (results.size() != batch.size())
          throw batch_failure(
              std::string(Method::name) + " returned " + std::to_string(results.size()) +
              " results for a batch of " + std::to_string(batch.size()) +
              " calls; a batched method returns one result per call, in order");
        for (std::size_t i = 0; i < batch.size(); ++i)
          batch[i]->result = std::move(results[i]);
      }
    } catch (const call_failure& e) {
      for (auto* caller : batch) caller->error = std::make_exception_ptr(e);
    } catch (const std::exception& e) {
      // Each caller gets a copy of its own: one exception rethrown in every
      // caller's thread is freed by whichever ends last, through a count
      // that ThreadSanitizer cannot see in libstdc++. A caller answers with
      // the message alone (dispatch.hpp), which the copy keeps.
      for (auto* caller : batch)
        caller->error = std::make_exception_ptr(std::runtime_error(e.what()));
    } catch (...) {
      for (auto* caller : batch) caller->error = std::current_exception();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<pending*> waiting_;
  bool running_ = false;
};

}  // namespace lp::detail
