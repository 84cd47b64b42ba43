#pragma once

// What lp::metrics needs of a node's registry (node_metrics.hpp): declared
// here without it, so that a user's code that records a figure includes no
// more than this.

#include <atomic>
#include <launchpad/detail/config.hpp>
#include <string_view>

namespace lp::detail {

class user_series;

// A counter and a gauge are a number their owner changes with one relaxed
// atomic operation; Prometheus reads them at any time.
struct user_figure {
  std::atomic<double> value{0};
};

// The calling node's counter, gauge or series of that name, made on first
// use. Throws usage_error outside a node, for a bad name, or for a name the
// node already uses for another kind.
LP_API user_figure& user_counter(std::string_view name);
LP_API user_figure& user_gauge(std::string_view name);
LP_API user_series& user_series_named(std::string_view name);

LP_API void record_in_series(user_series& series, double value);

}  // namespace lp::detail
