#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <launchpad/detail/buffers.hpp>
#include <launchpad/detail/channel.hpp>
#include <launchpad/detail/directory.hpp>
#include <launchpad/detail/dispatch.hpp>
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
    struct request_body {};
    struct reply_body {};
    auto& body = thread_buffer<request_body>();
    json::to_cbor(args, body);
    // The body goes out straight from the buffer and the reply comes into
    // one: httplib's own path copies a large body several times over.
    httplib::Request request;
    request.method = "POST";
    request.path = std::string(protocol::call_prefix) + method;
    request.headers = {{"Accept", protocol::cbor_type}, {"Content-Type", protocol::cbor_type}};
    if (!options_.secret.empty()) request.headers.emplace("Authorization", "Bearer " + options_.secret);
    if (body.size() <= streamed_body) {
      request.body = body;
    } else {
      request.content_length_ = body.size();
      request.content_provider_ = [&body](std::size_t offset, std::size_t length,
                                          httplib::DataSink& sink) {
        return sink.write(body.data() + offset, length);
      };
    }
    std::string* reply = nullptr;
    request.content_receiver = [&reply](const char* data, std::size_t length, std::uint64_t,
                                        std::uint64_t total) {
      // The reply's Content-Length sizes the buffer, within reason.
      if (!reply) reply = &thread_buffer<reply_body>(static_cast<std::size_t>(std::min<std::uint64_t>(total, 1u << 30)));
      reply->append(data, length);
      return true;
    };
    auto acquired = acquire(where);
    auto connection = std::move(acquired.first);
    bool reused = acquired.second;
    httplib::Response response;
    auto error = httplib::Error::Success;
    auto send = [&] {
      connection->set_connection_timeout(std::min<std::chrono::milliseconds>(left(), std::chrono::seconds(5)));
      connection->set_read_timeout(left());
      connection->set_write_timeout(left());
      return connection->send(request, response, error);
    };
    bool sent = send();
    if (!sent && reused && error == httplib::Error::Write) {
      // The server closed this pooled connection just before the call (its
      // keep-alive ran out), so the request never reached it: send it again
      // on a new connection.
      connection = connect(where);
      reply = nullptr;
      response = httplib::Response();
      sent = send();
    }
    if (!sent) {
      if (clock::now() - start >= deadline) throw expired(method, deadline);
      directory_->forget(node_, where);
      throw transport_error(node_, method,
                            "no answer from " + where.url() + " (" + httplib::to_string(error) + ")");
    }
    if (reply) response.body.swap(*reply);
    release(std::move(connection));
    auto value = interpret(method, response);
    if (reply) response.body.swap(*reply);  // the buffer goes back to this thread
    return value;
  }

  // Drops every idle connection; calls after this fail.
  void close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
    idle_.clear();
  }

 private:
  deadline_exceeded expired(const std::string& method, std::chrono::milliseconds deadline) const {
    return expired_call(node_, method, deadline, "; the method may still run on the node");
  }

  struct pooled {
    std::unique_ptr<httplib::Client> client;
    clock::time_point idle_since;
  };

  // A pooled connection (and true), or a new one.
  std::pair<std::unique_ptr<httplib::Client>, bool> acquire(const address& where) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) throw transport_error(node_, "", "the program has stopped");
      auto now = clock::now();
      while (!idle_.empty()) {
        auto connection = std::move(idle_.back());
        idle_.pop_back();
        if (now - connection.idle_since < max_idle) return {std::move(connection.client), true};
      }
    }
    return {connect(where), false};
  }

  static std::unique_ptr<httplib::Client> connect(const address& where) {
    auto client = std::make_unique<httplib::Client>(where.host, where.port);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    client->set_socket_options(large_socket_buffers);
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
    return result_of(node_, method, response.status, std::move(reply));
  }

  const std::string node_;
  const std::shared_ptr<directory> directory_;
  const options options_;
  std::mutex mutex_;
  std::vector<pooled> idle_;
  bool closed_ = false;
};

}  // namespace lp::detail
