#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <launchpad/detail/channel.hpp>
#include <launchpad/detail/directory.hpp>
#include <launchpad/detail/http_server.hpp>
#include <launchpad/detail/protocol.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

// A channel over HTTP keep-alive connections, pooled: concurrent calls each
// take a connection of their own, and a finished call gives its connection
// back for the next one (the most recent first), so steady traffic seldom
// reconnects.
class http_channel final : public channel {
 public:
  using clock = std::chrono::steady_clock;

  // A pooled connection idle longer than this is dropped before the server
  // drops it, so a call never races the server's keep-alive timeout.
  static constexpr auto max_idle = std::chrono::milliseconds(http_server::keep_alive_seconds * 500);

  struct options {
    std::string secret;  // empty: an --lp_insecure launch
  };

  http_channel(std::string node, std::shared_ptr<directory> nodes, options settings)
      : node_(std::move(node)), directory_(std::move(nodes)), options_(std::move(settings)) {}

  const std::string& node() const override { return node_; }

  json call(const std::string& method, const json& args,
            std::chrono::milliseconds deadline) override {
    auto start = clock::now();
    auto left = [&] {
      return std::max(std::chrono::milliseconds(1),
                      deadline - std::chrono::duration_cast<std::chrono::milliseconds>(
                                     clock::now() - start));
    };
    // The wait for a node that does not serve yet counts against the deadline.
    address where;
    try {
      where = directory_->lookup(node_, method, deadline);
    } catch (const transport_error& e) {
      if (clock::now() - start >= deadline) throw expired(method, deadline);
      throw;
    }
    auto connection = acquire(where);
    connection->set_connection_timeout(std::min<std::chrono::milliseconds>(left(), std::chrono::seconds(5)));
    connection->set_read_timeout(left());
    connection->set_write_timeout(left());
    auto body = protocol::encode(args, protocol::format::cbor);
    httplib::Headers headers{{"Accept", protocol::cbor_type}};
    if (!options_.secret.empty()) headers.emplace("Authorization", "Bearer " + options_.secret);
    auto result = connection->Post(std::string(protocol::call_prefix) + method, headers,
                                   body.data(), body.size(), protocol::cbor_type);
    if (!result) {
      if (clock::now() - start >= deadline) throw expired(method, deadline);
      directory_->forget(node_, where);
      throw transport_error(node_, method,
                            "no answer from " + where.url() + " (" +
                                httplib::to_string(result.error()) + ")");
    }
    release(std::move(connection));
    return interpret(method, *result);
  }

  // Drops every idle connection; calls after this fail.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    idle_.clear();
  }

 private:
  deadline_exceeded expired(const std::string& method, std::chrono::milliseconds deadline) const {
    return deadline_exceeded(node_, method,
                             "no reply within the deadline of " + std::to_string(deadline.count()) +
                                 " ms; the method may still run on the node");
  }

  struct pooled {
    std::unique_ptr<httplib::Client> client;
    clock::time_point idle_since;
  };

  std::unique_ptr<httplib::Client> acquire(const address& where) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) throw transport_error(node_, "", "the program has stopped");
      auto now = clock::now();
      while (!idle_.empty()) {
        auto connection = std::move(idle_.back());
        idle_.pop_back();
        if (now - connection.idle_since < max_idle) return std::move(connection.client);
      }
    }
    auto client = std::make_unique<httplib::Client>(where.host, where.port);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    return client;
  }

  void release(std::unique_ptr<httplib::Client> client) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    auto now = clock::now();
    idle_.push_back({std::move(client), now});
    // The oldest come first: drop those the server will have closed, so the
    // pool holds no dead sockets after a burst.
    auto fresh = std::find_if(idle_.begin(), idle_.end(),
                              [&](const pooled& p) { return now - p.idle_since < max_idle; });
    idle_.erase(idle_.begin(), fresh);
  }

  json interpret(const std::string& method, const httplib::Response& response) {
    auto format = protocol::format_of(response.get_header_value("Content-Type"));
    json reply;
    try {
      if (!format) throw std::runtime_error("unexpected Content-Type");
      reply = protocol::decode(response.body, *format);
    } catch (const std::exception& e) {
      throw remote_error(node_, method, "http_" + std::to_string(response.status),
                         "an unreadable reply (" + std::string(e.what()) + ")", response.status);
    }
    if (response.status == 200 && reply.is_object() && reply.contains("result"))
      return std::move(reply["result"]);
    const json* error = reply.is_object() && reply.contains("error") ? &reply["error"] : nullptr;
    auto text = [&](const char* key, const std::string& fallback) {
      return error && error->contains(key) && (*error)[key].is_string()
                 ? (*error)[key].get<std::string>()
                 : fallback;
    };
    throw remote_error(node_, method, text("code", "http_" + std::to_string(response.status)),
                       text("message", "HTTP status " + std::to_string(response.status)),
                       response.status);
  }

  const std::string node_;
  const std::shared_ptr<directory> directory_;
  const options options_;
  std::mutex mutex_;
  std::vector<pooled> idle_;
  bool closed_ = false;
};

}  // namespace lp::detail
