#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <launchpad/detail/serve/deadline_stream.hpp>
#include <launchpad/detail/serve/header_value.hpp>
#include <launchpad/detail/serve/httplib_internals.hpp>
#include <launchpad/detail/serve/parking.hpp>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/tls/session.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace lp::detail {

// httplib's socket options, with buffers of socket_buffer_bytes.
inline void large_socket_buffers(socket_t socket) {
  httplib::default_socket_options(socket);
  ::setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &socket_buffer_bytes, sizeof socket_buffer_bytes);
  ::setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &socket_buffer_bytes, sizeof socket_buffer_bytes);
}

// Why a server refuses, or gives up on, a request: an error body of the
// protocol (code, message), in JSON.
using refusal_body = std::function<std::string(std::string_view code, const std::string& message)>;

// httplib calls a task queue's enqueue on its accepting thread, once per
// accepted connection. This one runs each busy connection on a thread of an
// elastic pool of up to `threads` (cpp-httplib's own pool holds one thread
// per keep-alive connection for as long as the connection lives, so a fixed
// pool of 8 makes the 9th client wait for seconds), up to `cap` connections
// open at once, counted from accept to close, parked or not; past the cap
// it runs the connection's job right there, flagged, and the server answers
// 503 and closes without a thread (listener::refusing).
class connection_queue final : public httplib::TaskQueue {
 public:
  connection_queue(std::size_t cap, std::size_t threads, std::atomic<std::size_t>& open)
      : cap_(cap), open_(open), pool_(std::min(cap, threads)) {}
  enqueue_result enqueue(std::function<void()> job) override {
    // Only this thread adds to open_, so the check holds until the add.
    if (open_.load() >= cap_) {
      refusing() = true;
      job();
      refusing() = false;
    } else {
      open_.fetch_add(1);  // the connection's end takes it off
      pool_.enqueue(std::move(job));
    }
    // Taken either way: the refusal is the job's own answer.
    return static_cast<enqueue_result>(true);
  }
  // A parked connection's next request, on a thread of the pool.
  void resume(std::function<void()> job) { pool_.enqueue(std::move(job)); }
  void shutdown() override { pool_.shutdown(); }

  // Whether this thread's connection is one past the cap. A thread_local
  // because httplib hands the accepted socket and nothing else to the
  // server; only this server's threads set or read it.
  static bool& refusing() {
    thread_local bool past_cap = false;
    return past_cap;
  }

 private:
  const std::size_t cap_;
  std::atomic<std::size_t>& open_;
  thread_pool pool_;
};

// An httplib server set up the way every server of a launch needs it, and
// run on a thread of its own.
class listener {
 public:
  explicit listener(server_limits limits = {}) : server_(limits) {
    server_.new_task_queue = [this] {
      auto* queue =
          new connection_queue(server_.cap, server_.limits.max_threads, server_.open);
      server_.queue.store(queue);
      return queue;
    };
    server_.set_tcp_nodelay(true);
    // Accepted connections inherit the listening socket's buffer sizes.
    server_.set_socket_options(large_socket_buffers);
    // httplib calls the logger on the handler's thread once it has written
    // the reply: what the stream holds of it leaves now, before anyone
    // hears that it has.
    server_.set_logger([this](const httplib::Request&, const httplib::Response&) {
      if (auto* stream = server_with_limits::current()) stream->flush();
      if (written_) written_();
    });
    // httplib calls this once a request's headers are read, before its body.
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      auto* stream = server_with_limits::current();
      if (stream) stream->headers_read();
      if (!over_body_limit(req)) return httplib::Server::HandlerResponse::Unhandled;
      // Refused on its word, before a byte of the body is read: waiting for
      // a body that will not be taken would cost its whole transfer.
      res.status = 413;
      res.set_header("Connection", "close");
      res.set_content(server_.refusal("payload_too_large",
                                      "the body is larger than this node accepts (" +
                                          std::to_string(body_limit_) +
                                          " bytes, --lp_max_body_mb)"),
                      protocol::json_type);
      if (stream) stream->close_after_reply();
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() { stop(); }

  httplib::Server& server() { return server_; }

  // Connections open now, busy or parked (not those refused past the cap).
  std::size_t open_connections() const {
    return server_.open.load(std::memory_order_relaxed);
  }

  // Called on the handler's thread once a reply has been sent.
  void on_reply_written(std::function<void()> written) { written_ = std::move(written); }

  // The body of the 408, 413 and 503 replies the listener writes itself;
  // by default the protocol's error body without a node.
  void set_refusal_body(refusal_body body) { server_.refusal = std::move(body); }

  // Requests with a larger body get 413: at once when their Content-Length
  // says so, else (a chunked body) once it grows past the limit.
  void set_body_limit(std::size_t bytes) {
    body_limit_ = bytes;
    server_.set_payload_max_length(bytes);
  }

  // Serves every connection over TLS with this context (docs/protocol.md,
  // "Encryption"): a peer that does not complete the handshake within the
  // header timeout, or shows no certificate the context trusts, is closed
  // before any HTTP. Set before start().
  void set_tls(std::shared_ptr<const tls_context> context) { server_.tls = std::move(context); }
  bool tls() const { return server_.tls != nullptr; }

  // Binds host:port (port 0: any free port) and serves; returns the port,
  // or -1 if it cannot bind. Connections are accepted once it returns.
  int start(const std::string& host, int port) {
    int bound = port;
    if (port == 0) bound = server_.bind_to_any_port(host);
    else if (!server_.bind_to_port(host, port)) bound = -1;
    if (bound < 0) return -1;
    server_.widen_backlog();
    server_.parking = std::make_unique<connection_parking>();
    // The socket listens already: a peer's connection waits in the backlog
    // until the thread accepts it.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return bound;
  }

  // Stops accepting, closes the parked connections and waits for the
  // connection threads.
  void stop() {
    if (!thread_.joinable()) return;
    // First: a connection it wakes goes to the queue, which lives until
    // the accepting thread ends.
    server_.parking->close();
    server_.close_listening_socket();
    thread_.join();
  }

  bool running() const { return thread_.joinable(); }

 private:
  bool over_body_limit(const httplib::Request& req) const {
    if (body_limit_ == 0) return false;
    // Absent or empty: no length to refuse on.
    const std::string text(header_value(req, "Content-Length"));
    char* end = nullptr;
    errno = 0;
    auto declared = std::strtoull(text.c_str(), &end, 10);
    // An unreadable length is httplib's to refuse (400).
    if (text.empty() || *end != '\0' || text[0] == '-') return false;
    return errno == ERANGE || declared > body_limit_;
  }

  struct server_with_limits final : httplib_server {
    explicit server_with_limits(server_limits l)
        : limits(l), cap(connection_cap(l.max_connections)) {}

    // The stream of the connection this thread serves, for the pre-routing
    // handler, which httplib hands the request alone (a connection keeps
    // one thread from a request's first byte to its reply's last).
    static deadline_stream*& current() {
      thread_local deadline_stream* stream = nullptr;
      return stream;
    }

    const server_limits limits;
    const std::size_t cap;  // max_connections, within the file descriptors
    std::shared_ptr<const tls_context> tls;  // null: plain HTTP
    std::atomic<std::size_t> open{0};        // from accept to close
    std::atomic<connection_queue*> queue{nullptr};  // while the accepting thread runs
    std::unique_ptr<connection_parking> parking;    // from start()
    refusal_body refusal = [](std::string_view code, const std::string& message) {
      return protocol::encode(protocol::error_body(code, message, "", ""), protocol::format::json);
    };

   private:
    // How long a connection keeps its thread after a reply, waiting for the
    // next request, before it parks: a caller's next call (a loop of calls)
    // comes sooner and pays nothing for parking.
    static constexpr std::chrono::milliseconds park_after{20};

    // One open connection, from accept to close, on a thread or parked.
    struct connection {
      connection(socket_t s, std::atomic<std::size_t>& count, std::size_t requests)
          : socket(s), open(count), left(requests) {}
      connection(const connection&) = delete;
      connection& operator=(const connection&) = delete;
      ~connection() { open.fetch_sub(1, std::memory_order_relaxed); }
      const socket_t socket;
      std::atomic<std::size_t>& open;
      std::size_t left;  // requests it may still make
      std::optional<tls_session> session;
    };

    // httplib's accepting thread hands every connection here, on a pool
    // thread, or on itself for one past the cap. This is httplib's
    // keep-alive loop, over a deadline_stream instead of its own.
    bool serve_connection(socket_t socket) override {
      if (connection_queue::refusing()) {
        // A TLS peer could not read a plain reply, and a handshake here
        // would hold up the accepting thread: it finds the connection closed.
        if (tls) return close_socket(socket, false) && false;
        answer(socket, 503, "Service Unavailable", "overloaded",
               "this node has " + std::to_string(cap) +
                   " connections open, its limit (--lp_max_connections); try again later, "
                   "or launch it with a higher --lp_max_connections");
        return close_socket(socket, false);
      }
      auto c = std::make_shared<connection>(socket, open, settings().max_requests);
      if (tls && !handshake(socket, c->session))
        return close_socket(socket, true) && false;
      auto first = std::min<std::chrono::seconds>(
          settings().idle, std::chrono::seconds(protocol::first_request_seconds));
      return serve(std::move(c), std::chrono::steady_clock::now() + first);
    }

    // Requests on `c` until it ends, or idles past park_after (it parks,
    // and this thread goes). The next request is due by `idle_until`.
    bool serve(std::shared_ptr<connection> c,
               std::chrono::steady_clock::time_point idle_until) {
      auto loop = settings();
      deadline_stream stream(c->socket, limits, loop.read_timeout, loop.write_timeout,
                             c->session ? &*c->session : nullptr);
      current() = &stream;
      bool served = true, unread = false;
      while (c->left > 0 && listening()) {
        auto now = std::chrono::steady_clock::now();
        if (now >= idle_until) break;
        auto linger =
            std::min<std::chrono::steady_clock::duration>(park_after, idle_until - now);
        if (!stream.next_request(std::chrono::ceil<std::chrono::milliseconds>(linger))) {
          if (std::chrono::steady_clock::now() < idle_until && park(c, idle_until)) {
            current() = nullptr;
            return true;
          }
          continue;  // the loop ends it, or waits on without parking
        }
        bool closed = false;
        served = serve_one(stream, --c->left == 0, closed);
        // What httplib wrote without a logger call (a request it refused).
        if (!stream.flush()) served = false;
        if (auto late = stream.timed_out(); late != deadline_stream::phase::idle) {
          if (late == deadline_stream::phase::headers)
            answer(stream, 408, "Request Timeout", "request_timeout",
                   "the request's headers did not all arrive within " +
                       std::to_string(limits.header_timeout.count() / 1000) +
                       " s of its first byte (--lp_header_timeout_secs), or nothing came for " +
                       std::to_string(loop.read_timeout.count() / 1000) + " s");
          else if (late == deadline_stream::phase::body)
            answer(stream, 408, "Request Timeout", "request_timeout",
                   "the request's body came slower than " +
                       std::to_string(limits.min_bytes_per_second >> 10) +
                       " KiB/s (--lp_min_rate_kib_per_sec), or nothing came for " +
                       std::to_string(loop.read_timeout.count() / 1000) + " s");
          unread = true;
          break;
        }
        if (stream.closing()) {
          unread = true;
          break;
        }
        if (!served || closed) break;
        idle_until = std::chrono::steady_clock::now() + loop.idle;
      }
      current() = nullptr;
      return end(*c, unread) && served;
    }

    // Hands `c` to the parking until its next request comes (then a pool
    // thread serves it) or `idle_until` passes (then it closes). False if
    // the server is stopping: the caller still has it.
    bool park(const std::shared_ptr<connection>& c,
              std::chrono::steady_clock::time_point idle_until) {
      auto* accepting = queue.load();
      if (!parking || !accepting) return false;
      return parking->park(
          c->socket, idle_until, [this, c, accepting, idle_until](bool ready) {
            if (ready)
              accepting->resume([this, c, idle_until] { serve(c, idle_until); });
            else
              end(*c, false);
          });
    }

    bool end(connection& c, bool unread) {
      if (c.session) c.session->close();
      return close_socket(c.socket, unread);
    }

    // The TLS handshake of a new connection, on its non-blocking socket,
    // within the header timeout: a peer that stays silent holds its thread
    // no longer. False if it failed; the peer learns why from the alert
    // OpenSSL sent, if any, and nothing else.
    bool handshake(socket_t socket, std::optional<tls_session>& session) const {
      int flags = ::fcntl(socket, F_GETFL);
      if (flags < 0 || ::fcntl(socket, F_SETFL, flags | O_NONBLOCK) < 0) return false;
      try {
        session.emplace(*tls, socket, tls_session::role::server);
      } catch (const std::exception&) {
        return false;
      }
      return session->handshake(std::chrono::steady_clock::now() + limits.header_timeout) ==
             tls_session::trouble::none;
    }

    // A whole reply, in one send that never waits: it fits in the socket's
    // buffer, and a peer that left loses nothing it wanted.
    std::string reply_text(int status, std::string_view reason, std::string_view code,
                           const std::string& message) {
      auto body = refusal(code, message);
      return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
             "\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    }
    void answer(socket_t socket, int status, std::string_view reason, std::string_view code,
                const std::string& message) {
      auto reply = reply_text(status, reason, code, message);
      [[maybe_unused]] auto sent = ::send(socket, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    // The same through the connection's stream (and its TLS session, if any).
    void answer(deadline_stream& stream, int status, std::string_view reason,
                std::string_view code, const std::string& message) {
      stream.send_now(reply_text(status, reason, code, message));
    }

    // Closes so that the peer gets our reply and a FIN rather than a reset,
    // which would throw away the reply it has not read yet. A request left
    // `unread` (refused or cut off mid-way) may still be arriving: its
    // bytes are read and dropped for a moment after our FIN, so that the
    // close finds none unread.
    static bool close_socket(socket_t socket, bool unread) {
      char scratch[16 << 10];
      ::shutdown(socket, SHUT_WR);
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(unread ? 500 : 0);
      for (int i = 0; i < 256; ++i) {
        ssize_t got = ::recv(socket, scratch, sizeof scratch, MSG_DONTWAIT);
        if (got > 0) continue;
        if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;
        auto left = std::chrono::ceil<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        pollfd watched{socket, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&watched, 1, static_cast<int>(left.count())) <= 0) break;
      }
      return ::close(socket) == 0;
    }
  };

  server_with_limits server_;
  std::size_t body_limit_ = 0;  // 0: httplib's own limit alone
  std::function<void()> written_;
  std::thread thread_;
};

}  // namespace lp::detail
