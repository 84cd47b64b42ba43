#pragma once

// node_metrics.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/observe/node_metrics.hpp>

namespace lp::detail {

namespace metrics_of_this_thread {
inline node_metrics& node(std::string_view function) {
  const auto* identity = this_thread_node().identity;
  if (!identity || !identity->metrics)
    throw usage_error(
        std::string(function) +
        " was called outside a node; record a metric from a node's run(), one of "
        "its methods or its constructor");
  return *identity->metrics;
}
}  // namespace metrics_of_this_thread

LP_API user_figure& user_counter(std::string_view name) {
  return metrics_of_this_thread::node("lp::metrics::counter")
      .figure("lp::metrics::counter", name, node_metrics::kind::counter);
}

LP_API user_figure& user_gauge(std::string_view name) {
  return metrics_of_this_thread::node("lp::metrics::gauge")
      .figure("lp::metrics::gauge", name, node_metrics::kind::gauge);
}

LP_API user_series& user_series_named(std::string_view name) {
  return metrics_of_this_thread::node("lp::metrics::series")
      .series("lp::metrics::series", name);
}

LP_API void record_in_series(user_series& series, double value) {
  series.record(value);
}

}  // namespace lp::detail
