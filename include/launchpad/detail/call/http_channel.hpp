#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/call/node_addresses.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// A channel over HTTP keep-alive connections, pooled: concurrent calls each
// take a connection of their own, and a finished call gives its connection
// back for the next one (the most recent first), so steady traffic seldom
// reconnects. The connections are our own (http_connection.hpp), not
// httplib's client: one write per request, one read per reply, and a body
// read straight into the buffer it is decoded from.
class http_channel final : public channel {
 public:
  using clock = std::chrono::steady_clock;

  // A pooled connection idle longer than this is dropped before the server
  // drops it, so a call seldom races the server's keep-alive timeout.
  static constexpr auto max_idle =
      std::chrono::milliseconds(protocol::keep_alive_seconds * 500);
  // The longest a connect may take, within the call's deadline.
  static constexpr auto connect_timeout = std::chrono::seconds(5);
  // Replies up to this size are read; a larger one fails the call.
  static constexpr std::size_t max_reply = std::size_t{1} << 34;

  struct options {
    std::string secret;                      // empty: an --lp_insecure launch
    std::shared_ptr<const tls_context> tls;  // null: plain HTTP
  };

  http_channel(std::string node, std::shared_ptr<directory> nodes, options settings)
      : node_(std::move(node)),
        directory_(std::move(nodes)),
        tls_(std::move(settings.tls)) {
    headers_ = std::string("Content-Type: ") + protocol::media::cbor +
               "\r\nAccept: " + protocol::media::cbor + "\r\n";
    if (!settings.secret.empty())
      headers_ += "Authorization: Bearer " + settings.secret + "\r\n";
  }

  const std::string& node() const override { return node_; }

  raw_reply call(const std::string& method, std::span<const std::string_view> args,
                 const call_deadline& deadline, reply_sink* sink) override {
    // A node that refused the connection, or closed it unanswered, may have
    // gone because the program stops: the launch knows, so ask it before
    // saying the node did not answer. A refused call never reached the
    // node, so it is sent once more, to where the node serves now.
    for (int attempt = 0;; ++attempt) {
      try {
        return call_once(method, args, deadline, sink);
      } catch (const http_connection::failure& e) {
        // The node's TLS refused this caller, or is not this launch's:
        // another try goes the same way.
        if (e.kind == http_connection::failure::tls)
          throw transport_error(node_, method, e.what());
        bool refused = e.kind == http_connection::failure::refused;
        if (!refused || attempt > 0) {
          try {
            directory_->lookup(node_, method, std::chrono::milliseconds(100));
          } catch (const stopping&) {
            throw;
          } catch (const transport_error&) {
            // Gone, or not back yet: the node did not answer, as said below.
          }
          throw transport_error(node_, method,
                                std::string("no answer (") + e.what() + ")");
        }
      }
    }
  }

  // Drops every idle connection; calls after this fail.
  void close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
    idle_.clear();
  }

 private:
  // One try at the node where the launch says it serves. A refused
  // connection is thrown as it is, for call() to decide.
  raw_reply call_once(const std::string& method, std::span<const std::string_view> args,
                      const call_deadline& deadline, reply_sink* sink) {
    auto until = deadline.at;
    // The wait for a node that does not serve yet counts against the deadline.
    address where;
    try {
      where = directory_->lookup(node_, method, deadline.left());
    } catch (const transport_error&) {
      if (clock::now() >= until) throw expired(method, deadline.length);
      throw;
    }
    auto& reply = reply_buffer();
    auto path = std::string(protocol::path::call) + method;
    try {
      auto [connection, reused] = acquire(where, until);
      for (;;) {
        try {
          auto response = connection->post(path, headers_with_deadline(until), args,
                                           until, reply, max_reply, sink);
          if (connection->reusable()) release(std::move(connection));
          auto format = protocol::format_of(response.content_type);
          if (!format)
            throw remote_error(node_, method, "http_" + std::to_string(response.status),
                               "an unreadable reply: Content-Type '" +
                                   response.content_type +
                                   "' is neither JSON nor CBOR; is " + where.url() +
                                   " a Launchpad node?",
                               response.status);
          return {response.status, *format,
                  std::string_view(reply.data(), response.body_size), response.placed};
        } catch (const http_connection::failure& e) {
          // The server closed this pooled connection just before the call
          // (its keep-alive ran out), so the request never ran: send it again
          // on a new connection.
          if (e.kind != http_connection::failure::stale || !reused) throw;
          connection = connect(where, until);
          reused = false;
        }
      }
    } catch (const http_connection::failure& e) {
      if (e.kind == http_connection::failure::timeout || clock::now() >= until)
        throw expired(method, deadline.length);
      directory_->forget(node_, where);
      throw;
    }
  }

  deadline_exceeded expired(const std::string& method,
                            std::chrono::milliseconds deadline) const {
    return expired_call(node_, method, deadline,
                        "; the method may still run on the node");
  }

  // The node learns the call's deadline (lp::caller_deadline()), so that a
  // method that waits stops when the caller does; what is left of it at
  // the time of sending, rounded up so that a call with time left never
  // reads 0.
  const std::string& headers_with_deadline(clock::time_point until) const {
    thread_local std::string headers;
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
    headers.assign(headers_);
    headers.append(protocol::header::deadline).append(": ");
    headers.append(std::to_string(std::max<long long>(left, 0))).append("\r\n");
    return headers;
  }

  // This thread's reply buffer, which only grows (a reply is written over
  // it, so a large one is not zeroed first on every call), up to a size
  // kept between calls.
  static std::string& reply_buffer() {
    thread_local std::string buffer;
    drop_if_large(buffer);
    return buffer;
  }

  struct pooled {
    std::unique_ptr<http_connection> connection;
    clock::time_point idle_since;
  };

  // A pooled connection (and true), or a new one.
  std::pair<std::unique_ptr<http_connection>, bool> acquire(const address& where,
                                                            clock::time_point until) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) throw transport_error(node_, "", "the program has stopped");
      auto now = clock::now();
      while (!idle_.empty()) {
        auto connection = std::move(idle_.back());
        idle_.pop_back();
        if (now - connection.idle_since < max_idle)
          return {std::move(connection.connection), true};
      }
    }
    return {connect(where, until), false};
  }

  std::unique_ptr<http_connection> connect(const address& where,
                                           clock::time_point until) const {
    return http_connection::open(where.host, where.port,
                                 std::min(until, clock::now() + connect_timeout),
                                 tls_.get());
  }

  void release(std::unique_ptr<http_connection> connection) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    auto now = clock::now();
    idle_.push_back({std::move(connection), now});
    // The oldest come first: drop those the server will have closed, so the
    // pool holds no dead sockets after a burst.
    auto fresh = std::find_if(idle_.begin(), idle_.end(), [&](const pooled& p) {
      return now - p.idle_since < max_idle;
    });
    idle_.erase(idle_.begin(), fresh);
  }

  const std::string node_;
  const std::shared_ptr<directory> directory_;
  const std::shared_ptr<const tls_context> tls_;
  std::string headers_;  // Content-Type, Accept and the secret, as header lines
  std::mutex mutex_;
  std::vector<pooled> idle_;
  bool closed_ = false;
};

}  // namespace lp::detail
