#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/call/node_addresses.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
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
                 std::span<const cbor::bulk_array> arrays, const call_deadline& deadline,
                 reply_sink* sink) override {
    let_go_held();
    // A node that refused the connection, or closed it unanswered, may have
    // gone because the program stops: the launch knows, so ask it before
    // saying the node did not answer. A refused call never reached the
    // node, so it is sent once more, to where the node serves now.
    for (int attempt = 0;; ++attempt) {
      try {
        return call_once(method, args, arrays, deadline, sink);
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
    std::lock_guard lock(pool_->mutex);
    pool_->closed = true;
    pool_->idle.clear();
  }

 private:
  // One try at the node where the launch says it serves. A refused
  // connection is thrown as it is, for call() to decide.
  raw_reply call_once(const std::string& method, std::span<const std::string_view> args,
                      std::span<const cbor::bulk_array> arrays,
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
          auto& headers = headers_with_deadline(until);
          auto body = args;
          auto* shared = connection->shared();
          if (shared) {
            // To a node on this host, the large arrays go in shared memory.
            thread_local std::vector<std::string_view> packed;
            thread_local std::string references;
            if (shared->pack(args, arrays, packed, references)) body = packed;
            shared->head_lines(headers);
          }
          auto response =
              connection->post(path, headers, body, until, reply, max_reply, sink);
          std::span<const cbor::segment_view> segments;
          if (shared) segments = shared->segments();
          // The reply's reader reads the segments it brought: its
          // connection, which holds them, stays this thread's until its
          // next call.
          if (!segments.empty())
            hold(std::move(connection));
          else if (connection->reusable())
            pool_->release(std::move(connection));
          auto format = protocol::format_of(response.content_type);
          if (!format)
            throw remote_error(node_, method, "http_" + std::to_string(response.status),
                               "an unreadable reply: Content-Type '" +
                                   response.content_type +
                                   "' is neither JSON nor CBOR; is " + where.url() +
                                   " a Launchpad node?",
                               response.status);
          return {response.status, *format,
                  std::string_view(reply.data(), response.body_size), response.placed,
                  segments};
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
  std::string& headers_with_deadline(clock::time_point until) const {
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

  // The idle connections, shared with the thread that holds one
  // (held_connection) for as long as it is there.
  struct pool {
    std::mutex mutex;
    std::vector<pooled> idle;
    bool closed = false;

    void release(std::unique_ptr<http_connection> connection) {
      std::lock_guard lock(mutex);
      if (closed) return;
      auto now = clock::now();
      idle.push_back({std::move(connection), now});
      // The oldest come first: drop those the server will have closed, so
      // the pool holds no dead sockets after a burst.
      auto fresh = std::find_if(idle.begin(), idle.end(), [&](const pooled& p) {
        return now - p.idle_since < max_idle;
      });
      idle.erase(idle.begin(), fresh);
    }
  };

  // The connection of this thread's last reply, while its reader may still
  // read the segments it brought; back to its pool at the thread's next
  // call.
  struct held_connection {
    std::unique_ptr<http_connection> connection;
    std::weak_ptr<pool> to;
  };
  static held_connection& held() {
    thread_local held_connection slot;
    return slot;
  }
  void hold(std::unique_ptr<http_connection> connection) {
    let_go_held();
    held() = {std::move(connection), pool_};
  }
  static void let_go_held() {
    auto& slot = held();
    if (!slot.connection) return;
    auto connection = std::move(slot.connection);
    auto to = slot.to.lock();
    slot.to.reset();
    if (to && connection->reusable()) to->release(std::move(connection));
  }

  // A pooled connection (and true), or a new one.
  std::pair<std::unique_ptr<http_connection>, bool> acquire(const address& where,
                                                            clock::time_point until) {
    {
      std::lock_guard lock(pool_->mutex);
      if (pool_->closed) throw transport_error(node_, "", "the program has stopped");
      auto now = clock::now();
      auto& idle = pool_->idle;
      while (!idle.empty()) {
        auto connection = std::move(idle.back());
        idle.pop_back();
        if (now - connection.idle_since < max_idle)
          return {std::move(connection.connection), true};
      }
    }
    return {connect(where, until), false};
  }

  // Over the node's unix socket where it has one on this host, else (or if
  // that fails: a socket removed by hand, a directory this user may not
  // enter) over TCP.
  std::unique_ptr<http_connection> connect(const address& where,
                                           clock::time_point until) const {
    auto deadline = std::min(until, clock::now() + connect_timeout);
    if (!where.socket.empty() && !where.host_id.empty() &&
        where.host_id == host_identity()) {
      try {
        return http_connection::open_local(where.socket, deadline);
      } catch (const http_connection::failure& e) {
        if (e.kind == http_connection::failure::timeout) throw;
        if (!told_.exchange(true))
          std::cerr << "[lp] calls to " << node_ << " go over TCP: " << e.what()
                    << std::endl;
      }
    }
    return http_connection::open(where.host, where.port, deadline, tls_.get());
  }

  const std::string node_;
  const std::shared_ptr<directory> directory_;
  const std::shared_ptr<const tls_context> tls_;
  std::string headers_;  // Content-Type, Accept and the secret, as header lines
  std::shared_ptr<pool> pool_ = std::make_shared<pool>();
  mutable std::atomic<bool> told_{false};  // that the unix socket failed
};

}  // namespace lp::detail
