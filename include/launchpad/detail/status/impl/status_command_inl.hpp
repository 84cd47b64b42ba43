#pragma once

// status_command.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/status/status_command.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

namespace status_table {

inline std::string fixed(const nlohmann::json& value, int digits, double scale = 1) {
  if (!value.is_number()) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value.get<double>() * scale);
  return text;
}

inline std::string cell(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text + " ";
}

struct answer {
  int status = 0;
  std::string body;
};

// The page's answer to GET /lp/v1/status; nothing if it cannot be asked.
// As patient as a person at a shell: 2 s to connect, 5 s more for the
// answer.
inline std::optional<answer> fetch(const std::string& url, const std::string& secret) {
  using clock = http_connection::clock;
  // Every node's figures and history: large for a large launch, but bounded.
  constexpr std::size_t max_body = std::size_t{256} << 20;
  auto where = address_of_url(url);
  if (!where) return std::nullopt;
  std::string headers;
  if (!secret.empty()) headers = "Authorization: Bearer " + secret + "\r\n";
  std::string body;
  try {
    auto connection = http_connection::open(where->host, where->port,
                                            clock::now() + std::chrono::seconds(2));
    auto reply = connection->get(protocol::path::status, headers,
                                 clock::now() + std::chrono::seconds(5), body, max_body);
    body.resize(reply.body_size);
    return answer{reply.status, std::move(body)};
  } catch (const http_connection::failure&) {
    return std::nullopt;
  }
}

}  // namespace status_table

LP_API int print_status(const std::string& run_dir, bool as_json, std::ostream& out) {
  std::string url, secret;
  std::ifstream(run_dir + "/" + status_file) >> url;
  std::ifstream(run_dir + "/" + protocol::run_directory::secret) >> secret;
  if (url.empty()) {
    std::cerr << "[lp] " << run_dir
              << " names no status page: is it a run directory of a "
              << "running local_mt, local_mp or slurm launch (not one started with "
              << "--lp_status_port=off)?" << std::endl;
    return 1;
  }
  auto reply = status_table::fetch(url, secret);
  if (!reply || reply->status != 200) {
    std::cerr << "[lp] the status page at " << url << " does not answer"
              << (reply ? " (HTTP " + std::to_string(reply->status) + ")" : std::string())
              << "; has the launch ended?" << std::endl;
    return 1;
  }
  if (as_json) {
    out << reply->body << std::endl;
    return 0;
  }
  auto status = nlohmann::json::parse(reply->body);
  using status_table::cell, status_table::fixed;
  out << status["program"].get<std::string>() << " ("
      << status["policy"].get<std::string>() << ")\n";
  out << cell("NODE", 16) << cell("STATE", 10) << cell("PID", 8) << cell("RESTARTS", 8)
      << cell("CALLS/S", 8) << cell("P50_MS", 8) << cell("P99_MS", 8) << cell("RSS_MB", 8)
      << cell("CPU_%", 6) << "FIGURES\n";
  for (const auto& node : status["nodes"]) {
    // The latencies of the node's busiest method.
    const nlohmann::json* busiest = nullptr;
    double calls_per_second = 0;
    auto methods = node.value("methods", nlohmann::json::array());
    for (const auto& method : methods) {
      calls_per_second += method.value("per_second", 0.0);
      if (!busiest || method.value("calls", 0.0) > busiest->value("calls", 0.0))
        busiest = &method;
    }
    std::string figures;
    for (const char* kind : {"counters", "gauges", "series"}) {
      auto named = node.value(kind, nlohmann::json::object());
      for (const auto& [name, value] : named.items()) {
        // A series shows its last value.
        const auto& shown =
            value.is_array() ? (value.empty() ? value : value.back()[1]) : value;
        if (!shown.is_number()) continue;
        auto whole = shown.get<double>() ==
                     static_cast<double>(static_cast<long>(shown.get<double>()));
        figures += name + "=" + fixed(shown, whole ? 0 : 3) + " ";
      }
    }
    out << cell(node["label"].get<std::string>(), 16)
        << cell(node["state"].get<std::string>(), 10)
        << cell(std::to_string(node.value("pid", 0L)), 8)
        << cell(std::to_string(node.value("restarts", 0)), 8)
        << cell(node.contains("methods") ? fixed(calls_per_second, 1) : "-", 8)
        << cell(busiest ? fixed((*busiest)["p50"], 3, 1e3) : "-", 8)
        << cell(busiest ? fixed((*busiest)["p99"], 3, 1e3) : "-", 8)
        << cell(fixed(node.value("resident_bytes", nlohmann::json()), 1, 1.0 / (1 << 20)),
                8)
        << cell(fixed(node.value("cpu_percent", nlohmann::json()), 0), 6) << figures
        << "\n";
    if (!node.value("failure", "").empty())
      out << "  failed: " << node["failure"].get<std::string>() << "\n";
  }
  out << std::flush;
  return 0;
}

}  // namespace lp::detail
