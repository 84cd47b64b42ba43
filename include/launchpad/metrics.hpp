#pragma once

// Figures a node records about itself, exported with the node's own metrics
// at GET /lp/v1/metrics and plotted on the launcher's status page
// (docs/observability.md):
//
//   lp::metrics::counter("episodes").add(1);     // episodes_total
//   lp::metrics::gauge("replay_size").set(n);    // replay_size
//   lp::metrics::series("return").record(r);     // replay of the last values
//
// Each names a figure of the node whose code runs it (its run(), a method,
// its constructor), made on first use. A name is letters, digits and _, not
// starting with a digit, lp_ or __; a bad one, or one the node already uses
// for another kind, throws lp::usage_error. Constructing one looks the name
// up; keep it to record often. Recording from run() is a sign of its
// progress, for its group's health_timeout (lp::heartbeat()).

#include <atomic>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/detail/observe/user_metrics.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::metrics {

// A count that only goes up (Prometheus's counter; exported as <name>_total).
class counter {
 public:
  explicit counter(std::string_view name) : figure_(&detail::user_counter(name)) {}
  void add(double amount = 1) {
    if (!(amount >= 0))
      throw usage_error(
          "lp::metrics::counter::add(" + std::to_string(amount) +
          "): a counter only goes up; use lp::metrics::gauge for a figure that "
          "goes down");
    figure_->value.fetch_add(amount, std::memory_order_relaxed);
    detail::sign_of_life();
  }
  double value() const { return figure_->value.load(std::memory_order_relaxed); }

 private:
  detail::user_figure* figure_;
};

// A figure that goes up and down: its last value is exported.
class gauge {
 public:
  explicit gauge(std::string_view name) : figure_(&detail::user_gauge(name)) {}
  void set(double value) {
    figure_->value.store(value, std::memory_order_relaxed);
    detail::sign_of_life();
  }
  double value() const { return figure_->value.load(std::memory_order_relaxed); }

 private:
  detail::user_figure* figure_;
};

// Values over time: the node keeps its last 1000 with their times for the
// status page's plots; Prometheus sees the last one, as a gauge.
class series {
 public:
  explicit series(std::string_view name) : series_(&detail::user_series_named(name)) {}
  void record(double value) {
    detail::record_in_series(*series_, value);
    detail::sign_of_life();
  }

 private:
  detail::user_series* series_;
};

}  // namespace lp::metrics
