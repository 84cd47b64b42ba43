#pragma once

// exposition.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/observe/exposition.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string prometheus_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace exposition {

inline std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

struct writer {
  std::string out;
  std::string node;  // the node label, escaped

  void family(const protocol::metric::metric_family& f) {
    family(f.name, f.type, f.help);
  }

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
  }

  // name{node="...",extra} value
  void sample(std::string_view name, std::string_view extra, double value) {
    out += name;
    out += "{node=\"" + node + "\"";
    if (!extra.empty()) {
      out += ',';
      out += extra;
    }
    out += "} " + number(value) + "\n";
  }

  // `bounds` and `unit`: what the le labels and the sum say, per unit counted.
  template <std::size_t N, class Bound>
  void histogram_samples(std::string_view name, std::string_view extra,
                         const histogram<N>& h, const std::array<Bound, N>& bounds,
                         double unit) {
    std::string sep = extra.empty() ? "" : ",";
    double cumulative = 0;
    for (std::size_t i = 0; i <= N; ++i) {
      cumulative += static_cast<double>(h.buckets[i]);
      auto le = i < N ? number(static_cast<double>(bounds[i])) : std::string("+Inf");
      sample(std::string(name) + "_bucket",
             std::string(extra) + sep + "le=\"" + le + "\"", cumulative);
    }
    sample(std::string(name) + "_sum", extra, static_cast<double>(h.sum) * unit);
    sample(std::string(name) + "_count", extra, cumulative);
  }
};

inline std::string method_label(const node_metrics& metrics, std::size_t i) {
  return "method=\"" +
         (i < metrics.method_names().size()
              ? metrics.method_names()[i]
              : std::string(protocol::calls::unknown_method)) +
         "\"";
}

// Each method's figures, added up over the threads that counted them, with
// "(none)" last.
inline std::vector<call_figures<std::uint64_t>> method_totals(
    const node_metrics& metrics) {
  std::vector<call_figures<std::uint64_t>> totals;
  for (std::size_t i = 0; i <= metrics.method_names().size(); ++i)
    totals.push_back(metrics.method(i).total());
  return totals;
}

}  // namespace exposition

LP_API std::string prometheus_text(const node_metrics& metrics, std::string_view label,
                                   const process_figures& process,
                                   std::size_t connections) {
  namespace metric = protocol::metric;
  exposition::writer w{{}, prometheus_label_value(label)};
  auto totals = exposition::method_totals(metrics);
  auto methods = totals.size();
  // "(none)" once called; for a node with no methods, at 0 from the start,
  // so that a scrape finds every node in every family of calls.
  auto used = [&](std::size_t i) {
    return i < metrics.method_names().size() || totals[i].latency.count() > 0 ||
           metrics.method_names().empty();
  };
  w.family(metric::calls_total);
  for (std::size_t i = 0; i < methods; ++i) {
    if (!used(i)) continue;
    for (std::size_t s = 0; s < call_statuses.size(); ++s) {
      auto count = totals[i].by_status[s];
      // Every method shows its successes, at 0 too, and "(none)" its 404s,
      // which is all it answers; other statuses once seen.
      auto shown_at_zero = i < metrics.method_names().size() ? 200 : 404;
      if (count == 0 && call_statuses[s] != shown_at_zero) continue;
      auto code = call_statuses[s] ? std::to_string(call_statuses[s])
                                   : std::string(protocol::calls::other_status);
      w.sample(metric::calls_total.name,
               exposition::method_label(metrics, i) + ",code=\"" + code + "\"",
               static_cast<double>(count));
    }
  }
  w.family(metric::call_duration_seconds);
  for (std::size_t i = 0; i < methods; ++i)
    if (used(i))
      w.histogram_samples(metric::call_duration_seconds.name,
                          exposition::method_label(metrics, i), totals[i].latency,
                          latency_bounds, 1e-9);
  w.family(metric::calls_in_flight);
  for (std::size_t i = 0; i < methods; ++i)
    if (used(i))
      w.sample(metric::calls_in_flight.name, exposition::method_label(metrics, i),
               static_cast<double>(static_cast<std::int64_t>(totals[i].in_flight)));
  w.family(metric::call_request_bytes_total);
  for (std::size_t i = 0; i < methods; ++i)
    if (used(i))
      w.sample(metric::call_request_bytes_total.name,
               exposition::method_label(metrics, i),
               static_cast<double>(totals[i].request_bytes));
  w.family(metric::call_reply_bytes_total);
  for (std::size_t i = 0; i < methods; ++i)
    if (used(i))
      w.sample(metric::call_reply_bytes_total.name, exposition::method_label(metrics, i),
               static_cast<double>(totals[i].reply_bytes));
  bool batched = false;
  for (std::size_t i = 0; i + 1 < methods; ++i)
    batched = batched || totals[i].batch_sizes.count() > 0;
  if (batched) {
    w.family(metric::batch_size);
    for (std::size_t i = 0; i + 1 < methods; ++i)
      if (totals[i].batch_sizes.count() > 0)
        w.histogram_samples(metric::batch_size.name, exposition::method_label(metrics, i),
                            totals[i].batch_sizes, batch_bounds, 1.0);
  }
  w.family(metric::process_resident_memory_bytes);
  w.sample(metric::process_resident_memory_bytes.name, "", process.resident_bytes);
  w.family(metric::process_cpu_seconds_total);
  w.sample(metric::process_cpu_seconds_total.name, "", process.cpu_seconds);
  w.family(metric::process_threads);
  w.sample(metric::process_threads.name, "", static_cast<double>(process.threads));
  w.family(metric::open_connections);
  w.sample(metric::open_connections.name, "", static_cast<double>(connections));
  w.family(metric::restarts_total);
  w.sample(metric::restarts_total.name, "", static_cast<double>(process.restarts));
  const auto& shared = process.shared_memory;
  w.family(metric::shared_memory_bytes);
  w.sample(metric::shared_memory_bytes.name, "", shared.bytes);
  w.family(metric::shared_memory_messages_total);
  w.sample(metric::shared_memory_messages_total.name, "", shared.messages);
  w.family(metric::shared_memory_fallbacks_total);
  w.sample(metric::shared_memory_fallbacks_total.name, "", shared.fallbacks);
  w.family(metric::shared_memory_kept_total);
  w.sample(metric::shared_memory_kept_total.name, "", shared.kept);
  metrics.each_user_figure(
      [&](const std::string& name, const node_metrics::user_entry& entry) {
        switch (entry.what) {
          case node_metrics::kind::counter: {
            auto exported = name.ends_with("_total") ? name : name + "_total";
            w.family(exported, "counter", "lp::metrics::counter(\"" + name + "\")");
            w.sample(exported, "", entry.figure->value.load(std::memory_order_relaxed));
            break;
          }
          case node_metrics::kind::gauge:
            w.family(name, "gauge", "lp::metrics::gauge(\"" + name + "\")");
            w.sample(name, "", entry.figure->value.load(std::memory_order_relaxed));
            break;
          case node_metrics::kind::series: {
            auto points = entry.series->points();
            if (points.empty()) break;
            w.family(name, "gauge",
                     "The last value of lp::metrics::series(\"" + name + "\")");
            w.sample(name, "", points.back().second);
            break;
          }
        }
      });
  return std::move(w.out);
}

LP_API nlohmann::json metrics_json(const node_metrics& metrics, std::string_view label,
                                   const process_figures& process,
                                   std::size_t connections) {
  using nlohmann::json;
  json methods = json::array();
  auto totals = exposition::method_totals(metrics);
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const auto& calls = totals[i];
    if (i == metrics.method_names().size() && calls.latency.count() == 0) break;
    json by_code = json::object();
    for (std::size_t s = 0; s < call_statuses.size(); ++s)
      if (auto count = calls.by_status[s])
        by_code[call_statuses[s] ? std::to_string(call_statuses[s])
                                 : protocol::calls::other_status] = count;
    json fastest, slowest;  // null before the first call
    if (calls.extremes.fastest <= calls.extremes.slowest) {
      fastest = static_cast<double>(calls.extremes.fastest) * 1e-9;
      slowest = static_cast<double>(calls.extremes.slowest) * 1e-9;
    }
    json buckets = json::array();
    std::uint64_t cumulative = 0;
    for (const auto& bucket : calls.latency.buckets)
      buckets.push_back(cumulative += bucket);
    methods.push_back({{"name", i < metrics.method_names().size()
                                    ? metrics.method_names()[i]
                                    : std::string(protocol::calls::unknown_method)},
                       {"calls", cumulative},
                       {"by_code", by_code},
                       {"latency_buckets", buckets},
                       {"fastest", fastest},
                       {"slowest", slowest},
                       {"in_flight", static_cast<std::int64_t>(calls.in_flight)},
                       {"request_bytes", calls.request_bytes},
                       {"reply_bytes", calls.reply_bytes},
                       {"batches", calls.batch_sizes.count()}});
  }
  json counters = json::object(), gauges = json::object(), series = json::object();
  metrics.each_user_figure(
      [&](const std::string& name, const node_metrics::user_entry& entry) {
        if (entry.what == node_metrics::kind::counter)
          counters[name] = entry.figure->value.load(std::memory_order_relaxed);
        else if (entry.what == node_metrics::kind::gauge)
          gauges[name] = entry.figure->value.load(std::memory_order_relaxed);
        else {
          json points = json::array();
          for (auto [t, v] : entry.series->points()) points.push_back({t, v});
          series[name] = std::move(points);
        }
      });
  return {{"node", label},
          {"pid", process.pid},
          {"host", process.host},
          {"resident_bytes", process.resident_bytes},
          {"cpu_seconds", process.cpu_seconds},
          {"threads", process.threads},
          {"connections", connections},
          {"restarts", process.restarts},
          {"shared_memory",
           {{"bytes", process.shared_memory.bytes},
            {"messages", process.shared_memory.messages},
            {"fallbacks", process.shared_memory.fallbacks},
            {"kept", process.shared_memory.kept}}},
          {"latency_bounds", latency_bounds},
          {"methods", methods},
          {"counters", counters},
          {"gauges", gauges},
          {"series", series}};
}

}  // namespace lp::detail
