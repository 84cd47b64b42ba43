#pragma once

// A node's figures as the Prometheus text exposition format (version 0.0.4,
// what GET /lp/v1/metrics answers) and as JSON (what the status page reads).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/observe/node_metrics.hpp>
#include <launchpad/detail/observe/process_figures.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// A label value between the quotes: \, " and newline escaped, as the format
// asks; anything else (UTF-8 included) as it is.
LP_API std::string prometheus_label_value(std::string_view value);

// The node's calls, its process and its user figures. `connections`: those
// open on the node's server now.
LP_API std::string prometheus_text(const node_metrics& metrics, std::string_view label,
                                   const process_figures& process,
                                   std::size_t connections);

// The same, for the status page: cumulative counts per method and status, the
// latency buckets (cumulative too, bounds in latency_bounds), the fastest and
// slowest call (seconds; null before the first), user figures and every point
// of each series.
LP_API nlohmann::json metrics_json(const node_metrics& metrics, std::string_view label,
                                   const process_figures& process,
                                   std::size_t connections);

}  // namespace lp::detail
