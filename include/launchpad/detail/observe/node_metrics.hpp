#pragma once

// The figures one node keeps: its calls, method by method, and what its own
// code records through lp::metrics. Its server exports them (exposition.hpp);
// the launcher's status page reads them as JSON.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/observe/call_metrics.hpp>
#include <launchpad/detail/observe/metric_name.hpp>
#include <launchpad/detail/observe/user_metrics.hpp>
#include <launchpad/error.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// The last `capacity` values recorded, each with its time (seconds since
// the epoch): what the status page plots. Recording takes a lock; a series
// is for figures a node has now and then (an episode's return), not per call.
class user_series {
 public:
  static constexpr std::size_t capacity = 1000;

  void record(double value) {
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::lock_guard lock(mutex_);
    if (points_.size() < capacity)
      points_.emplace_back(now, value);
    else
      points_[next_] = {now, value};
    next_ = (next_ + 1) % capacity;
    ++recorded_;
  }

  // Oldest first.
  std::vector<std::pair<double, double>> points() const {
    std::lock_guard lock(mutex_);
    if (points_.size() < capacity) return points_;
    std::vector<std::pair<double, double>> out(points_.begin() + static_cast<long>(next_),
                                               points_.end());
    out.insert(out.end(), points_.begin(), points_.begin() + static_cast<long>(next_));
    return out;
  }

  std::size_t recorded() const {
    std::lock_guard lock(mutex_);
    return recorded_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<double, double>> points_;
  std::size_t next_ = 0;
  std::size_t recorded_ = 0;
};

class node_metrics {
 public:
  enum class kind { counter, gauge, series };

  // The methods a call may name, in the service's order; a call to any
  // other name is counted under "(none)", so that a peer cannot make the
  // node's metrics grow by calling made-up names. Set before serving.
  void set_methods(std::vector<std::string> names) {
    names_ = std::move(names);
    calls_ = std::make_unique<method_calls[]>(names_.size() + 1);
  }

  const std::vector<std::string>& method_names() const { return names_; }

  method_calls& method(std::size_t i) { return calls_[i]; }
  const method_calls& method(std::size_t i) const { return calls_[i]; }
  method_calls& calls_to(std::string_view name) {
    std::size_t i = 0;
    while (i < names_.size() && names_[i] != name) ++i;
    return calls_[i];
  }

  // The figure of that name, made on first use; a name has one kind.
  user_figure& figure(std::string_view function, std::string_view name, kind wanted) {
    check_metric_name(function, name);
    std::lock_guard lock(mutex_);
    auto& entry = entry_of(function, name, wanted);
    return *entry.figure;
  }
  user_series& series(std::string_view function, std::string_view name) {
    check_metric_name(function, name);
    std::lock_guard lock(mutex_);
    return *entry_of(function, name, kind::series).series;
  }

  struct user_entry {
    kind what;
    std::unique_ptr<user_figure> figure;  // a counter's or a gauge's
    std::unique_ptr<user_series> series;
  };

  // Calls f(name, entry) for each user figure, by name, under the lock.
  template <class F>
  void each_user_figure(F f) const {
    std::lock_guard lock(mutex_);
    for (const auto& [name, entry] : users_) f(name, entry);
  }

 private:
  user_entry& entry_of(std::string_view function, std::string_view name, kind wanted) {
    auto [it, added] = users_.try_emplace(std::string(name));
    auto& entry = it->second;
    if (added) {
      entry.what = wanted;
      if (wanted == kind::series)
        entry.series = std::make_unique<user_series>();
      else
        entry.figure = std::make_unique<user_figure>();
    } else if (entry.what != wanted) {
      static constexpr const char* kinds[] = {"counter", "gauge", "series"};
      throw usage_error(std::string(function) + "(\"" + std::string(name) +
                        "\"): this node already has a " +
                        kinds[static_cast<int>(entry.what)] +
                        " of that name; a metric name has one kind");
    }
    return entry;
  }

  std::vector<std::string> names_;
  std::unique_ptr<method_calls[]> calls_ = std::make_unique<method_calls[]>(1);
  mutable std::mutex mutex_;
  std::map<std::string, user_entry, std::less<>> users_;
};

// The methods that have calls in flight, as "tie (1), ping (2)"; empty if
// none. A hung node's last words name them: its in-flight figures are the
// one place that knows which handler it was stuck in.
inline std::string methods_in_flight(const node_metrics& metrics) {
  std::string out;
  const auto& names = metrics.method_names();
  for (std::size_t i = 0; i <= names.size(); ++i) {
    auto count = static_cast<std::int64_t>(metrics.method(i).total().in_flight);
    if (count <= 0) continue;
    if (!out.empty()) out += ", ";
    out += (i < names.size() ? names[i] : std::string(protocol::calls::unknown_method)) +
           " (" + std::to_string(count) + ")";
  }
  return out;
}

}  // namespace lp::detail
