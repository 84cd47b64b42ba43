#pragma once

// How the node processes of a launch find each other. The launcher serves
// a small HTTP directory on loopback; each node publishes its address there
// once it serves, and callers look addresses up there, waiting for nodes
// that do not serve yet. Nodes bind port 0, so no port is ever picked in
// advance and raced for.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/call/node_addresses.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/serve/listener.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/error.hpp>
#include <launchpad/wire.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// An address as the rendezvous carries it: a node's unix socket and its
// host's identity only where it has one.
inline json address_json(const address& where) {
  json out{{"host", where.host}, {"port", where.port}};
  if (!where.socket.empty()) {
    out["socket"] = where.socket;
    out["host_id"] = where.host_id;
  }
  return out;
}

// The launcher's side.
class rendezvous_server {
 public:
  struct callbacks {
    std::function<void(const std::string& label)> stop_requested;
    std::function<void(const std::string& label)> run_finished;
    // Whether the runs of these nodes or groups have all returned (true),
    // the program stops first (false), or neither within `wait`.
    std::function<std::optional<bool>(const std::vector<std::string>& names,
                                      std::chrono::milliseconds wait)>
        runs_finished;
    // A node process ends, and tells how: `failure` is empty for a clean
    // end; `unrecoverable`, a failure no restart mends (a Python node whose
    // class its host cannot have). Only where the launcher does not see its
    // processes exit (Kubernetes); elsewhere left empty.
    std::function<void(const std::string& label, const std::string& failure,
                       bool unrecoverable)>
        process_ended;
    // A node published where it serves; may be left empty.
    std::function<void(const std::string& label, const address& where)> published;
  };

  // `host`: loopback, unless the nodes run on other hosts (Slurm). With a
  // TLS context, it serves HTTPS to the launch's nodes only. `port` 0: any
  // free one, which the launcher hands its nodes.
  rendezvous_server(std::string secret, callbacks on,
                    const std::string& host = "127.0.0.1",
                    std::shared_ptr<const tls_context> tls = nullptr, int port = 0)
      : secret_(std::move(secret)), on_(std::move(on)) {
    listener_.set_tls(std::move(tls));
    auto& routes = listener_.routes();
    auto guarded = [this](auto handler) {
      return [this, handler](const http_request& req, http_reply& res) {
        if (!secret_.empty()) {
          auto problem = credential_problem(req.header("Authorization"), secret_);
          if (!problem.empty()) {
            res.status = 401;
            res.set_content(json{{"error", problem}}.dump(), protocol::media::json);
            return;
          }
        }
        try {
          handler(req, res);
        } catch (const std::exception& e) {
          res.status = 400;
          res.set_content(json{{"error", e.what()}}.dump(), protocol::media::json);
        }
      };
    };
    routes.post(protocol::path::rendezvous_publish, guarded([this](auto& req, auto& res) {
                  auto body = json::parse(req.body);
                  auto label = body.at("label").template get<std::string>();
                  address where;
                  where.host = body.at("host").template get<std::string>();
                  where.port = body.at("port").template get<int>();
                  where.socket = body.value("socket", "");
                  where.host_id = body.value("host_id", "");
                  publish(label, where);
                  if (on_.published) on_.published(label, where);
                  res.set_content("{}", protocol::media::json);
                }));
    routes.post(
        protocol::path::rendezvous_lookup, guarded([this](auto& req, auto& res) {
          auto body = json::parse(req.body);
          auto label = body.at("label").template get<std::string>();
          auto wait = std::chrono::milliseconds(
              std::clamp(body.at("wait_ms").template get<long>(), 0L, 10'000L));
          std::unique_lock lock(mutex_);
          changed_.wait_for(lock, wait, [&] {
            return closed_ || nodes_[label].where || nodes_[label].gone;
          });
          auto& entry = nodes_[label];
          if (closed_) {
            // A stopping program takes no new callers: a node found now would
            // refuse the call, or be gone.
            res.status = 410;
            res.set_content(
                json{{"error", "the program is stopping"}, {"stopping", true}}.dump(),
                protocol::media::json);
          } else if (entry.where) {
            res.set_content(address_json(*entry.where).dump(), protocol::media::json);
          } else {
            res.status = entry.gone ? 410 : 404;
            res.set_content(
                json{{"error", entry.gone ? *entry.gone : "not serving yet"}}.dump(),
                protocol::media::json);
          }
        }));
    routes.post(protocol::path::rendezvous_stop, guarded([this](auto& req, auto& res) {
                  on_.stop_requested(
                      json::parse(req.body).at("label").template get<std::string>());
                  res.set_content("{}", protocol::media::json);
                }));
    routes.post(
        protocol::path::rendezvous_finished, guarded([this](auto& req, auto& res) {
          on_.run_finished(json::parse(req.body).at("label").template get<std::string>());
          res.set_content("{}", protocol::media::json);
        }));
    if (on_.process_ended)
      routes.post(protocol::path::rendezvous_ended, guarded([this](auto& req, auto& res) {
                    auto body = json::parse(req.body);
                    on_.process_ended(body.at("label").template get<std::string>(),
                                      body.at("failure").template get<std::string>(),
                                      body.value("unrecoverable", false));
                    res.set_content("{}", protocol::media::json);
                  }));
    routes.post(protocol::path::rendezvous_runs, guarded([this](auto& req, auto& res) {
                  auto body = json::parse(req.body);
                  auto outcome = on_.runs_finished(
                      body.at("names").template get<std::vector<std::string>>(),
                      std::chrono::milliseconds(std::clamp(
                          body.at("wait_ms").template get<long>(), 0L, 10'000L)));
                  res.set_content(json{{"done", outcome.value_or(false)},
                                       {"stopping", outcome == false}}
                                      .dump(),
                                  protocol::media::json);
                }));
    int bound = listener_.start(host, port);
    if (bound < 0)
      throw launch_error("the launcher cannot listen on " + host +
                         (port ? " port " + std::to_string(port) : std::string()));
    address where;
    where.host = host;
    where.port = bound;
    url_ = where.url(listener_.tls());
  }
  rendezvous_server(const rendezvous_server&) = delete;
  rendezvous_server& operator=(const rendezvous_server&) = delete;
  ~rendezvous_server() {
    close();
    listener_.stop();
  }

  const std::string& url() const { return url_; }

  void publish(const std::string& label, const address& where) {
    {
      std::lock_guard lock(mutex_);
      nodes_[label].where = where;
      nodes_[label].gone.reset();
    }
    changed_.notify_all();
  }

  // The node's process ended; `restarting` keeps callers waiting for the
  // next one, otherwise they fail at once with `reason`.
  void withdraw(const std::string& label, bool restarting, const std::string& reason) {
    {
      std::lock_guard lock(mutex_);
      nodes_[label].where.reset();
      if (!restarting) nodes_[label].gone = reason;
    }
    changed_.notify_all();
  }

  std::optional<address> find(const std::string& label) {
    std::lock_guard lock(mutex_);
    return nodes_[label].where;
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }

 private:
  struct entry {
    std::optional<address> where;
    std::optional<std::string> gone;
  };

  const std::string secret_;
  const callbacks on_;
  std::string url_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, entry> nodes_;
  bool closed_ = false;
  // Every node process of a launch keeps connections here: room for many.
  // Last: it stops before what its handlers use.
  listener listener_{server_limits{.max_connections = 8192}};
};

// A node process's side: a directory that asks the launcher, and remembers.
class rendezvous_directory final : public directory {
 public:
  rendezvous_directory(std::string url, const std::string& secret,
                       std::shared_ptr<const tls_context> tls = nullptr)
      : url_(std::move(url)),
        launcher_(address_of(url_)),
        tls_(std::move(tls)),
        headers_("Content-Type: " + std::string(protocol::media::json) + "\r\n" +
                 (secret.empty() ? "" : "Authorization: Bearer " + secret + "\r\n")) {}

  void publish(const std::string& label, const address& where) override {
    auto body = address_json(where);
    body["label"] = label;
    post(protocol::path::rendezvous_publish, body);
  }

  address lookup(const std::string& label, const std::string& method,
                 std::chrono::steady_clock::duration timeout) override {
    {
      std::lock_guard lock(mutex_);
      if (closed_) throw stopping(label, method, "the program is stopping");
      if (auto known = cache_.find(label); known != cache_.end()) return known->second;
    }
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        throw transport_error(label, method, "the node did not start serving in time");
      auto reply =
          ask(label, method, protocol::path::rendezvous_lookup,
              {{"label", label}, {"wait_ms", std::min<long>(left.count(), 5000)}});
      if (reply.status == 200) {
        address where;
        where.host = reply.body.at("host").get<std::string>();
        where.port = reply.body.at("port").get<int>();
        where.socket = reply.body.value("socket", "");
        where.host_id = reply.body.value("host_id", "");
        std::lock_guard lock(mutex_);
        cache_[label] = where;
        return where;
      }
      if (reply.status == 410 && reply.body.is_object() &&
          reply.body.contains("stopping")) {
        stop_this_threads_program();
        throw stopping(label, method, "the program is stopping");
      }
      if (reply.status != 404)
        throw transport_error(
            label, method,
            reply.body.is_object() && reply.body.contains("error")
                ? "the node is gone: " + reply.body["error"].get<std::string>()
                : "the launcher answered HTTP " + std::to_string(reply.status));
    }
  }

  void forget(const std::string& label, const address& where) override {
    std::lock_guard lock(mutex_);
    if (auto known = cache_.find(label); known != cache_.end() && known->second == where)
      cache_.erase(known);
  }

  void close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }

  // Waits until the launcher has heard that the run() of every node named
  // returned (true), or the program stops (false), as this process or the
  // launcher sees it.
  bool wait_for_runs(const std::vector<std::string>& names, const launch_state& here) {
    while (!here.stop_requested()) {
      // Short polls: a stop of this process alone (a failure the launcher
      // restarts) must not keep its run() threads waiting long.
      auto reply = ask("launcher", "wait_for_runs", protocol::path::rendezvous_runs,
                       {{"names", names}, {"wait_ms", 1000}});
      if (reply.status != 200 || !reply.body.is_object())
        throw launch_error("lp::wait_for_runs(): the launcher answered HTTP " +
                           std::to_string(reply.status));
      if (reply.body.value("done", false)) return true;
      if (reply.body.value("stopping", false)) return false;
    }
    return false;
  }

  // Best effort: during a stop the launcher may already be gone.
  void tell(const char* path, const std::string& label, json more = json::object()) {
    more["label"] = label;
    try {
      post(path, more);
    } catch (const std::exception&) {
    }
  }

 private:
  struct answer {
    int status;
    json body;  // discarded if it is not JSON
  };

  // One request to the launcher, on a connection of its own: a node asks
  // seldom (once per peer, again when a peer restarts), through the same
  // client as its calls. A launcher busy starting 64 processes (under a
  // sanitizer, on 2 cores) may be slow to answer; one that is gone kills
  // its nodes anyway, so patience costs nothing. One that hung up before
  // any answer did not take the request (its listener answers every one it
  // reads, but closes a new connection it found silent for
  // protocol::first_request_seconds, which a node on a loaded machine may
  // be) and is asked again, up to `attempts` times in all. One that
  // refuses the connection is gone, and that fails at once.
  answer ask(const std::string& node, const std::string& method, const std::string& path,
             const json& body) const {
    constexpr int attempts = 3;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (int attempt = 1;; ++attempt) {
      std::unique_ptr<http_connection> connection;
      try {
        connection =
            http_connection::open(launcher_.host, launcher_.port, deadline, tls_.get());
        std::string reply;
        auto response = connection->post(path, headers_, body.dump(), deadline, reply,
                                         std::size_t{1} << 20);
        return {response.status,
                json::parse(std::string_view(reply).substr(0, response.body_size),
                            nullptr, false)};
      } catch (const http_connection::failure& e) {
        bool unanswered = e.kind == http_connection::failure::broken && connection &&
                          !connection->answered();
        if (unanswered && attempt < attempts) continue;
        if (e.kind == http_connection::failure::tls)
          throw transport_error(node, method,
                                std::string("the launcher's rendezvous: ") + e.what());
        throw transport_error(
            node, method,
            "the launcher does not answer; it may have stopped (" +
                std::string(e.what()) +
                (attempt > 1 ? "; asked " + std::to_string(attempt) + " times)" : ")"));
      }
    }
  }

  void post(const std::string& path, const json& body) {
    std::optional<answer> reply;
    std::string why;
    try {
      reply = ask("launcher", "rendezvous", path, body);
    } catch (const transport_error& e) {
      why = e.what();
    }
    if (!reply || reply->status != 200)
      throw launch_error("the launcher's rendezvous at " + url_ + " did not take " +
                         path + " (" +
                         (reply ? "HTTP " + std::to_string(reply->status) : why) + ")");
  }

  // "http://host:port" (https:// with TLS), as rendezvous_server::url() wrote it.
  static address address_of(const std::string& url) {
    auto where = address_of_url(url);
    if (!where)
      throw launch_error("the launcher's rendezvous URL '" + url +
                         "' is not http://host:port");
    return *where;
  }

  const std::string url_;
  const address launcher_;
  const std::shared_ptr<const tls_context> tls_;
  const std::string headers_;
  std::mutex mutex_;
  std::map<std::string, address> cache_;
  bool closed_ = false;
};

}  // namespace lp::detail
