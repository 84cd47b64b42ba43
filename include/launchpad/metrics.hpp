#pragma once

/// @file
/// lp::metrics: figures a node records about itself (docs/observability.md).

#include <atomic>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/detail/observe/user_metrics.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

/// Figures a node records about itself, exported with the node's own
/// metrics at `GET /lp/v1/metrics` and plotted on the launcher's status page.
///
/// ```cpp
/// lp::metrics::counter("episodes").add(1);   // exported as episodes_total
/// lp::metrics::gauge("replay_size").set(n);  // replay_size
/// lp::metrics::series("return").record(r);   // its last 1000 values, plotted
/// ```
///
/// Each names a figure of the node whose code runs it (its run(), a method,
/// its constructor), made on first use. A name follows Prometheus's rule,
/// `[a-zA-Z_][a-zA-Z0-9_]*`, at most 100 characters, and does not start with
/// `lp_` (the library's) or `__`. Constructing one looks the name up under a
/// lock: to record in a loop, keep it. Recording from run() is a sign of its
/// progress, for its group's health_timeout (lp::heartbeat()).
namespace lp::metrics {

/// A count that only goes up: Prometheus's counter, exported as
/// `<name>_total`.
class counter {
 public:
  /// The node's counter of this name, made at 0 on first use.
  /// @throws lp::usage_error outside a node, for a bad name, or for a name the
  /// node uses for another kind
  explicit counter(std::string_view name) : figure_(&detail::user_counter(name)) {}
  /// Adds `amount` to the count.
  /// @throws lp::usage_error if `amount` is negative or NaN
  void add(double amount = 1) {
    if (!(amount >= 0))
      throw usage_error(
          "lp::metrics::counter::add(" + std::to_string(amount) +
          "): a counter only goes up; use lp::metrics::gauge for a figure that "
          "goes down");
    figure_->value.fetch_add(amount, std::memory_order_relaxed);
    detail::sign_of_life();
  }
  /// The count so far.
  double value() const { return figure_->value.load(std::memory_order_relaxed); }

 private:
  detail::user_figure* figure_;
};

/// A figure that goes up and down: its last value is exported.
class gauge {
 public:
  /// The node's gauge of this name, made at 0 on first use.
  /// @throws lp::usage_error outside a node, for a bad name, or for a name the
  /// node uses for another kind
  explicit gauge(std::string_view name) : figure_(&detail::user_gauge(name)) {}
  /// Sets the figure.
  void set(double value) {
    figure_->value.store(value, std::memory_order_relaxed);
    detail::sign_of_life();
  }
  /// The last value set.
  double value() const { return figure_->value.load(std::memory_order_relaxed); }

 private:
  detail::user_figure* figure_;
};

/// Values over time: the node keeps its last 1000 with their times for the
/// status page's plots; Prometheus sees the last one, as a gauge.
class series {
 public:
  /// The node's series of this name, made empty on first use.
  /// @throws lp::usage_error outside a node, for a bad name, or for a name the
  /// node uses for another kind
  explicit series(std::string_view name) : series_(&detail::user_series_named(name)) {}
  /// Records a value, at the time of the call.
  void record(double value) {
    detail::record_in_series(*series_, value);
    detail::sign_of_life();
  }

 private:
  detail::user_series* series_;
};

}  // namespace lp::metrics
