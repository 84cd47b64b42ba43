#pragma once

// status_server.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/status/status_server.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

namespace status {

inline double now_seconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The q-quantile of the calls whose cumulative latency buckets are
// `buckets`, interpolated within its bucket as Prometheus's
// histogram_quantile() does, but kept within the fastest and the slowest
// call of the process (`method`'s "fastest" and "slowest"): a bucket's edges
// are no call's time, and a method called once shows that call's. Null
// without calls.
inline nlohmann::json quantile(const std::vector<double>& buckets, double q,
                               const nlohmann::json& method) {
  if (buckets.empty() || buckets.back() <= 0) return nullptr;
  double rank = q * buckets.back();
  std::size_t i = 0;
  while (i + 1 < buckets.size() && buckets[i] < rank) ++i;
  double below = i ? buckets[i - 1] : 0;
  double lower = i ? latency_bounds[i - 1] : 0;
  bool last = i >= latency_bounds.size();
  // The last bucket has no upper bound: unless the slowest call bounds it,
  // say its lower one.
  double upper = last ? lower : latency_bounds[i];
  auto fastest = method.value("fastest", nlohmann::json());
  auto slowest = method.value("slowest", nlohmann::json());
  if (fastest.is_number() && slowest.is_number()) {
    double low = std::max(lower, fastest.get<double>());
    double high = last ? slowest.get<double>() : std::min(upper, slowest.get<double>());
    // A scrape reads the buckets and the extremes a moment apart; should
    // they disagree, the bucket holds.
    if (low <= high) {
      lower = low;
      upper = high;
    }
  }
  double in_bucket = buckets[i] - below;
  return lower + (upper - lower) * (in_bucket > 0 ? (rank - below) / in_bucket : 1);
}

inline std::vector<double> buckets_of(const nlohmann::json& method) {
  std::vector<double> out;
  if (method.contains("latency_buckets"))
    for (const auto& count : method["latency_buckets"])
      out.push_back(count.get<double>());
  return out;
}

inline double calls_of(const nlohmann::json& figures) {
  double total = 0;
  if (figures.contains("methods"))
    for (const auto& method : figures["methods"]) total += method.value("calls", 0.0);
  return total;
}

inline const nlohmann::json* method_named(const nlohmann::json& figures,
                                          const std::string& name) {
  if (!figures.contains("methods")) return nullptr;
  for (const auto& method : figures["methods"])
    if (method.value("name", "") == name) return &method;
  return nullptr;
}

// The poller's connection to one node, kept from one poll to the next while
// the node keeps it open.
struct node_link {
  std::unique_ptr<http_connection> connection;
  std::string url;  // where `connection` goes
};

// Far above any node's figures (a user series keeps 1000 points), yet a
// bound on what a confused peer could make the launcher hold.
inline constexpr std::size_t max_metrics_body = std::size_t{64} << 20;

// The body of the node's GET /lp/v1/metrics at `url`, asked on its link's
// connection (a new one if the node moved or dropped it); nothing if the
// node does not answer 200 by `deadline`. Valid until `body` changes.
// `tls`: the launch's, if its nodes speak TLS.
inline std::optional<std::string_view> fetch_metrics(
    node_link& link, const std::string& url, const std::string& headers,
    std::string& body, http_connection::clock::time_point deadline,
    const tls_context* tls = nullptr) {
  auto where = address_of_url(url);
  if (!where) return std::nullopt;
  for (bool retried = false;; retried = true) {
    try {
      if (!link.connection || !link.connection->reusable() || link.url != url) {
        link.connection = http_connection::open(where->host, where->port, deadline, tls);
        link.url = url;
      }
      auto reply = link.connection->get(protocol::path::metrics, headers, deadline, body,
                                        max_metrics_body);
      if (reply.status != 200) return std::nullopt;
      return std::string_view(body.data(), reply.body_size);
    } catch (const http_connection::failure& e) {
      link.connection.reset();
      // A node ends an idle connection after protocol::keep_alive_seconds
      // (and a stopping one at once): the request it closed on never ran,
      // and goes again on a new connection.
      if (e.kind != http_connection::failure::stale || retried) return std::nullopt;
    }
  }
}

}  // namespace status

LP_API status_server::status_server(const program& graph, policy_kind policy,
                                    std::string secret, source nodes,
                                    std::shared_ptr<const tls_context> tls)
    : graph_(graph),
      policy_(name_of(policy)),
      secret_(std::move(secret)),
      nodes_(std::move(nodes)),
      tls_(std::move(tls)) {
  auto& routes = listener_.routes();
  routes.get("/", [](const http_request&, http_reply& res) {
    res.set_header(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src data:");
    res.set_header("Cache-Control", "no-store");
    res.set_content(std::string(status_page_html), "text/html; charset=utf-8");
  });
  routes.get(protocol::path::health, [](const http_request&, http_reply& res) {
    res.set_content(R"({"status":"serving"})", protocol::media::json);
  });
  routes.get(protocol::path::status, [this](const http_request& req, http_reply& res) {
    res.set_header("Cache-Control", "no-store");
    if (!secret_.empty()) {
      auto problem = credential_problem(req.header("Authorization"), secret_);
      if (!problem.empty()) {
        res.status = 401;
        return res.set_content(
            protocol::encode(
                protocol::error_body(protocol::error::unauthenticated, problem, "", ""),
                protocol::format::json),
            protocol::media::json);
      }
    }
    res.set_content(status_json(), protocol::media::json);
  });
}

LP_API status_server::~status_server() {
  poller_.stop();
  listener_.stop();
}

LP_API std::string status_server::start(const std::string& host, int port) {
  int bound = listener_.start(host, port);
  if (bound < 0)
    throw bind_error("the status page cannot listen on " + host + ":" +
                     std::to_string(port) + "; choose another --lp_status_port, or off");
  // Only the poller uses the connections (by label): they need no lock, so
  // a node that takes its whole second to answer holds up none of the
  // page's requests.
  poller_.start([this, links = std::map<std::string, status::node_link>(),
                 body = std::string()]() mutable {
    poll(links, body);
    return periodic_worker::clock::now() + std::chrono::seconds(1);
  });
  return "http://" + host + ":" + std::to_string(bound) + "/";
}

LP_API void status_server::poll(std::map<std::string, status::node_link>& links,
                                std::string& body) {
  auto headers = std::string("Accept: ") + protocol::media::json + "\r\n";
  if (!secret_.empty()) headers += "Authorization: Bearer " + secret_ + "\r\n";
  // The launcher's view first, then each serving node's own, one at a
  // time: a node that does not answer within a second is shown as the
  // launcher sees it.
  auto nodes = nodes_();
  for (const auto& node : nodes) {
    if (node.url.empty()) {
      links.erase(node.label);
      continue;
    }
    if (poller_.stop_requested()) return;
    auto text = status::fetch_metrics(
        links[node.label], node.url, headers, body,
        http_connection::clock::now() + std::chrono::seconds(1), tls_.get());
    if (!text) continue;
    auto figures = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (figures.is_discarded() || !figures.is_object()) continue;
    // A restarted node answers from a new process, on a new port or the
    // same one, with a new pid.
    auto process = node.url + " " + figures.value("pid", nlohmann::json()).dump();
    auto now = status::now_seconds();
    std::lock_guard held(mutex_);
    auto& seen = histories_[node.label];
    if (seen.samples.empty() || seen.samples.back().process != process) seen.since = now;
    seen.samples.push_back({now, std::move(figures), node.url, std::move(process)});
    if (seen.samples.size() > kept_samples) seen.samples.pop_front();
  }
}

LP_API nlohmann::json status_server::node_json(const node_status& node,
                                               const history* seen) const {
  using nlohmann::json;
  const auto& spec = graph_.node(node.label);
  json out = {{"label", node.label},
              {"group", spec.group},
              {"service", spec.service},
              {"edges", spec.edges},
              {"state", to_string(node.state)},
              {"pid", node.pid},
              {"restarts", node.restarts},
              {"failure", node.failure},
              {"last_lines", node.last_lines}};
  if (!seen || seen->samples.empty()) return out;
  const auto& samples = seen->samples;
  const auto& last = samples.back();
  const auto& figures = last.figures;
  // A node's figures are its process's: a new process counts from 0 again,
  // which is a reset, not a fall (as Prometheus's rate() has it). So rates
  // and latencies come from the last process's samples alone: over the last
  // ten seconds, or since its first sample.
  auto first = samples.size() - 1;
  while (first > 0 && samples[first - 1].process == last.process) --first;
  const sample* before = &samples[first];
  for (auto i = samples.size(); i-- > first;)
    if (last.time - samples[i].time >= 10) {
      before = &samples[i];
      break;
    }
  double span = last.time - before->time;
  out["since"] = seen->since;
  json new_process_at = json::array();
  for (std::size_t i = 1; i < samples.size(); ++i)
    if (samples[i].process != samples[i - 1].process)
      new_process_at.push_back(samples[i].time);
  out["new_process_at"] = new_process_at;
  // The node's own process id, on its host: under Slurm the launcher's
  // child is srun, on the supervisor's. Until a restarted node answers, the
  // figures are its old process's, and the launcher's pid holds.
  if (last.url == node.url) out["pid"] = figures.value("pid", node.pid);
  out["host"] = figures.value("host", "");
  out["resident_bytes"] = figures.value("resident_bytes", 0.0);
  out["threads"] = figures.value("threads", 0);
  out["connections"] = figures.value("connections", 0);
  out["cpu_seconds"] = figures.value("cpu_seconds", 0.0);
  out["cpu_percent"] = span > 0 ? 100 *
                                      (figures.value("cpu_seconds", 0.0) -
                                       before->figures.value("cpu_seconds", 0.0)) /
                                      span
                                : 0.0;
  out["updated"] = last.time;
  json methods = json::array();
  for (const auto& method : figures["methods"]) {
    auto name = method.value("name", "");
    auto now = status::buckets_of(method);
    std::vector<double> window = now;
    double calls_before = 0;
    if (const auto* earlier = status::method_named(before->figures, name);
        earlier && span > 0) {
      auto then = status::buckets_of(*earlier);
      for (std::size_t i = 0; i < window.size() && i < then.size(); ++i)
        window[i] -= then[i];
      calls_before = earlier->value("calls", 0.0);
    }
    // No call lately: the figures since the start.
    if (window.empty() || window.back() <= 0) window = now;
    double errors = 0;
    for (const auto& [code, count] : method["by_code"].items())
      if (code != "200") errors += count.get<double>();
    methods.push_back(
        {{"name", name},
         {"calls", method.value("calls", 0.0)},
         {"errors", errors},
         {"in_flight", method.value("in_flight", 0)},
         {"per_second",
          span > 0 ? (method.value("calls", 0.0) - calls_before) / span : 0.0},
         {"p50", status::quantile(window, 0.5, method)},
         {"p99", status::quantile(window, 0.99, method)}});
  }
  out["methods"] = methods;
  json rate = json::array();
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const auto& a = samples[i - 1];
    const auto& b = samples[i];
    if (b.time > a.time && b.process == a.process)
      rate.push_back(
          {b.time, (status::calls_of(b.figures) - status::calls_of(a.figures)) /
                       (b.time - a.time)});
  }
  out["calls_per_second"] = rate;
  out["counters"] = figures.value("counters", json::object());
  out["gauges"] = figures.value("gauges", json::object());
  out["series"] = figures.value("series", json::object());
  return out;
}

LP_API std::string status_server::status_json() {
  std::map<std::string, node_status> nodes;
  for (auto& node : nodes_()) nodes[node.label] = std::move(node);
  nlohmann::json listed = nlohmann::json::array();
  {
    std::lock_guard lock(mutex_);
    for (const auto& spec : graph_.nodes()) {  // in the graph's order
      auto node = nodes.find(spec.label);
      if (node == nodes.end()) continue;
      auto seen = histories_.find(spec.label);
      listed.push_back(
          node_json(node->second, seen == histories_.end() ? nullptr : &seen->second));
    }
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& spec : graph_.nodes())
    if (!spec.group.empty() && (groups.empty() || groups.back() != spec.group))
      groups.push_back(spec.group);
  return nlohmann::json{{"program", graph_.name()},
                        {"policy", policy_},
                        {"time", status::now_seconds()},
                        {"groups", groups},
                        {"nodes", listed}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

LP_API std::unique_ptr<status_server> start_status_page(
    const program& graph, policy_kind policy, const std::string& secret,
    const std::string& run_dir, port_or_off port, status_server::source nodes,
    std::shared_ptr<const tls_context> tls) {
  if (!port.number) return nullptr;
  auto page = std::make_unique<status_server>(graph, policy, secret, std::move(nodes),
                                              std::move(tls));
  auto url = page->start("127.0.0.1", *port.number);
  if (!run_dir.empty()) {
    int fd = ::open((run_dir + "/" + status_file).c_str(),
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      write_all(fd, url + "\n");
      ::close(fd);
    }
  }
  std::cerr << "[lp] status at " << url << std::endl;
  return page;
}

LP_API void linger(const status_server* page, int seconds) {
  if (!page || seconds <= 0) return;
  std::cerr << "[lp] the program has ended; its status page stays up for " << seconds
            << " s (--lp_status_linger_secs; Ctrl+C to leave now)" << std::endl;
  std::mutex mutex;
  std::condition_variable woken;
  bool leave = false;
  auto wake = [&](int) {
    std::lock_guard lock(mutex);
    leave = true;
    woken.notify_all();
  };
  stop_on_signals signals(wake, wake);
  std::unique_lock lock(mutex);
  woken.wait_for(lock, std::chrono::seconds(seconds), [&] { return leave; });
}

}  // namespace lp::detail
