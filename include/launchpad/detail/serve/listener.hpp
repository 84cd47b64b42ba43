#pragma once

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <launchpad/detail/serve/deadline_stream.hpp>
#include <launchpad/detail/serve/exchange.hpp>
#include <launchpad/detail/serve/parking.hpp>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/tls/session.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/http1.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>

namespace lp::detail {

// Why a server refuses, or gives up on, a request: an error body of the
// protocol (code, message), in JSON.
using refusal_body =
    std::function<std::string(std::string_view code, const std::string& message)>;

// An HTTP/1.1 server on a thread of its own, the way every server of a
// launch needs it: a node, the launcher's rendezvous, the status page.
//
// One thread accepts, on the TCP socket and on a unix socket if it has one
// (wire/local_socket.hpp: the callers on its host). Each connection is
// served on a thread of an elastic
// pool while it is busy, from its request's first byte to 20 ms after its
// reply (a caller's next call usually comes sooner); then it parks without
// a thread (parking.hpp) until its next request. Up to max_connections are
// open at once, parked or not; one more is answered 503 by the accepting
// thread itself and closed, without a thread. Every request is read under
// the deadlines of deadline_stream and the limits of server_limits
// (docs/protocol.md, "Limits").
class listener {
 public:
  explicit listener(server_limits limits = {})
      : limits_(limits),
        cap_(connection_cap(limits.max_connections)),
        pool_(std::min(cap_, limits.max_threads)) {
    // A peer that leaves mid-reply must cost a failed write, not the
    // process: OpenSSL writes to the socket without MSG_NOSIGNAL. (As
    // cpp-httplib's server did before, for the whole process.)
    ::signal(SIGPIPE, SIG_IGN);
  }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() {
    stop();
    close_local();
  }

  // Where handlers go; set before start().
  http_routes& routes() { return routes_; }

  // Connections open now, busy or parked (not those refused past the cap).
  std::size_t open_connections() const { return open_.load(std::memory_order_relaxed); }

  // Called on the handler's thread once a reply has been sent.
  void on_reply_written(std::function<void()> written) { written_ = std::move(written); }

  // The body of the error replies the listener writes itself (400, 404,
  // 408, 413, 431, 503...); by default the protocol's error body without a
  // node.
  void set_refusal_body(refusal_body body) { refusal_ = std::move(body); }

  // Requests with a larger body get 413: at once when their Content-Length
  // says so, else (a chunked body) once it grows past the limit.
  void set_body_limit(std::size_t bytes) { body_limit_ = bytes; }

  // Serves every connection over TLS with this context (docs/protocol.md,
  // "Encryption"): a peer that does not complete the handshake within the
  // header timeout, or shows no certificate the context trusts, is closed
  // before any HTTP. Set before start().
  void set_tls(std::shared_ptr<const tls_context> context) { tls_ = std::move(context); }
  bool tls() const { return tls_ != nullptr; }

  // Also serves on a unix socket at `path` (listen_unix), from start() on;
  // removed again at stop(). False, with errno set, if it cannot listen
  // there. Before start().
  bool listen_locally(const std::string& path) {
    close_local();
    local_ = listen_unix(path);
    if (local_ < 0) return false;
    ::fcntl(local_, F_SETFL, ::fcntl(local_, F_GETFL) | O_NONBLOCK);
    local_path_ = path;
    return true;
  }

  // Binds host:port (port 0: any free port) and serves; returns the port,
  // or -1 if it cannot bind. Connections are accepted once it returns.
  int start(const std::string& host, int port) {
    int bound = bind_and_listen(host, port);
    if (bound < 0) return -1;
    wake_ = ::eventfd(0, EFD_CLOEXEC);
    if (wake_ < 0) {
      ::close(listening_);
      listening_ = -1;
      return -1;
    }
    parking_ = std::make_unique<connection_parking>();
    thread_ = std::thread([this] { accept_all(); });
    return bound;
  }

  // Stops accepting, closes the parked connections, lets the busy ones end
  // their request, and waits for every thread.
  void stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    // From here on a connect is refused, as at a node that has stopped, and
    // its caller asks the launch whether the program stops
    // (call/http_channel.hpp). Listening on until the close below, while
    // the pool finished its calls, the kernel took connections that the
    // close then reset unanswered, and a TLS caller took that for a failed
    // handshake and failed its node.
    ::shutdown(listening_, SHUT_RDWR);
    if (local_ >= 0) ::shutdown(local_, SHUT_RDWR);
    std::uint64_t one = 1;
    [[maybe_unused]] auto woken = ::write(wake_, &one, sizeof one);  // poll() returns
    thread_.join();
    // A connection it wakes goes to the pool, which runs what is queued.
    parking_->close();
    pool_.shutdown();
    ::close(listening_);
    listening_ = -1;
    ::close(wake_);
    wake_ = -1;
    close_local();
  }

  bool running() const { return thread_.joinable(); }

 private:
  // How long a connection keeps its thread after a reply, waiting for the
  // next request, before it parks: a caller's next call (a loop of calls)
  // comes sooner and pays nothing for parking.
  static constexpr std::chrono::milliseconds park_after{20};
  static constexpr std::size_t max_fields = 100;

  using clock = std::chrono::steady_clock;

  // One open connection, from accept to close, on a thread or parked.
  struct connection {
    connection(int s, bool on_unix, std::atomic<std::size_t>& count)
        : socket(s), local(on_unix), open(count) {
      if (local) exchange = std::make_unique<segment_exchange>();
    }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    ~connection() { open.fetch_sub(1, std::memory_order_relaxed); }
    const int socket;
    const bool local;  // on the unix socket
    std::atomic<std::size_t>& open;
    std::optional<tls_session> session;
    // On the unix socket: the descriptors that came, and the shared memory
    // of its messages (wire/shared_memory.hpp).
    received_descriptors descriptors;
    std::unique_ptr<segment_exchange> exchange;
  };

  int bind_and_listen(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
      return -1;
    int bound = -1;
    for (auto* at = found; at && bound < 0; at = at->ai_next) {
      int fd = ::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        at->ai_protocol);
      if (fd < 0) continue;
      int on = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      // Accepted connections inherit the buffer sizes.
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &socket_buffer_bytes,
                   sizeof socket_buffer_bytes);
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &socket_buffer_bytes,
                   sizeof socket_buffer_bytes);
      sockaddr_storage where{};
      socklen_t length = sizeof where;
      if (::bind(fd, at->ai_addr, at->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&where), &length) != 0) {
        ::close(fd);
        continue;
      }
      listening_ = fd;
      bound = ntohs(where.ss_family == AF_INET6
                        ? reinterpret_cast<const sockaddr_in6&>(where).sin6_port
                        : reinterpret_cast<const sockaddr_in&>(where).sin_port);
    }
    ::freeaddrinfo(found);
    return bound;
  }

  void accept_all() {
    pollfd watched[] = {{wake_, POLLIN, 0}, {listening_, POLLIN, 0}, {local_, POLLIN, 0}};
    while (!stopping_) {
      if (::poll(watched, local_ < 0 ? 2 : 3, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (watched[0].revents) return;  // stopping
      for (int i : {1, 2}) {
        if (i == 2 && local_ < 0) continue;
        if (watched[i].revents) accept_one(watched[i].fd, i == 2);
      }
    }
  }

  void accept_one(int listening, bool local) {
    // The listening sockets do not block: a connection that poll() saw may
    // be gone by the accept. The accepted one blocks (deadline_stream
    // reads and writes with MSG_DONTWAIT, and waits in its own poll).
    int socket = ::accept4(listening, nullptr, nullptr, SOCK_CLOEXEC);
    if (socket < 0) {
      // Out of descriptors or memory: the peer waits in the backlog until
      // a connection closes.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return;  // EAGAIN, EINTR, ECONNABORTED: poll again
    }
    int on = 1;
    if (!local) ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    // Only this thread adds to open_, so the check holds until the add.
    if (open_.load() >= cap_) {
      refuse_past_cap(socket, local);
      return;
    }
    open_.fetch_add(1);  // the connection's end takes it off
    pool_.enqueue([this, socket, local] { serve_new(socket, local); });
  }

  void close_local() {
    if (local_ < 0) return;
    ::close(local_);
    local_ = -1;
    ::unlink(local_path_.c_str());
  }

  // One past the cap: answered at once, on the accepting thread, and
  // closed. A TLS peer could not read a plain reply, and a handshake here
  // would hold up the accepting thread: it finds the connection closed.
  void refuse_past_cap(int socket, bool local) {
    if (!tls_ || local) {
      auto reply =
          reply_text(503, "overloaded",
                     "this node has " + std::to_string(cap_) +
                         " connections open, its limit (--lp_max_connections); try "
                         "again later, or launch it with a higher --lp_max_connections");
      [[maybe_unused]] auto sent =
          ::send(socket, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close_socket(socket, false);
  }

  void serve_new(int socket, bool local) {
    auto c = std::make_shared<connection>(socket, local, open_);
    // A unix socket never leaves the host, and only its user may open it:
    // its calls are plain HTTP, with the secret (docs/protocol.md).
    if (tls_ && !local && !handshake(*c)) return close_socket(socket, true);
    auto first = std::min<std::chrono::seconds>(
        std::chrono::seconds(protocol::keep_alive_seconds),
        std::chrono::seconds(protocol::first_request_seconds));
    serve(std::move(c), clock::now() + first);
  }

  // What serving one request left of its connection.
  enum class after { next, close, close_unread };

  // Requests on `c` until it ends, or idles past park_after (it parks, and
  // this thread goes). The next request is due by `idle_until`; one that
  // came by then is served, however late a thread gets to it (else a busy
  // launcher's rendezvous closes a node's first request unread, and the
  // node cannot publish where it serves).
  void serve(std::shared_ptr<connection> c, clock::time_point idle_until) {
    deadline_stream stream(c->socket, limits_, c->session ? &*c->session : nullptr,
                           c->local ? &c->descriptors : nullptr);
    after next = after::next;
    while (next == after::next && !stopping_) {
      auto linger = std::clamp<clock::duration>(idle_until - clock::now(),
                                                clock::duration::zero(), park_after);
      if (!stream.next_request(std::chrono::ceil<std::chrono::milliseconds>(linger))) {
        if (clock::now() >= idle_until) break;
        if (park(c, idle_until)) return;
        continue;  // the parking is closed: wait on without parking
      }
      next = serve_one(stream, *c);
      idle_until = clock::now() + std::chrono::seconds(protocol::keep_alive_seconds);
    }
    end(*c, next == after::close_unread);
  }

  // Reads one request, routes it, writes its reply.
  after serve_one(deadline_stream& stream, connection& c) {
    thread_local http1::request_head head;
    std::string_view text;
    switch (stream.read_head(text)) {
      case deadline_stream::head_read::whole:
        break;
      case deadline_stream::head_read::none:
        return after::close;
      case deadline_stream::head_read::too_large:
        return refuse(stream, 431, protocol::error::headers_too_large,
                      "the request's head is over " +
                          std::to_string(deadline_stream::head_limit >> 10) + " KiB");
      case deadline_stream::head_read::failed:
        return cut_off(stream);
    }
    if (auto error = http1::parse_request_head(text, head))
      return refuse(stream, error->status, protocol::error::bad_request, error->message);
    if (head.fields.size() > max_fields)
      return refuse(
          stream, 431, protocol::error::headers_too_large,
          "the request has over " + std::to_string(max_fields) + " header fields");
    stream.headers_read();

    bool has_body = head.length || head.chunked;
    if (body_limit_ && head.length && *head.length > body_limit_)
      // Refused on its word, before a byte of the body is read (and before
      // anything else is looked at): waiting for a body that will not be
      // taken would cost its whole transfer.
      return refuse(stream, 413, protocol::error::payload_too_large, too_large_message());
    thread_local std::string decoded;
    auto path = http1::percent_decoded(head.path(), decoded);
    auto [handler, rest] = routes_.find(head.method, path);
    if (!handler) {
      auto message =
          "no route " + std::string(head.method) + " " + http1::printable(path);
      // A body that no one will read ends the connection, unread.
      if (has_body) return refuse(stream, 404, protocol::error::no_such_route, message);
      if (auto refused = take_segments(stream, head, c)) return *refused;
      return answer(stream, head, 404, protocol::error::no_such_route, message, c);
    }
    std::string_view body;
    if (has_body) {
      if (head.expect_continue && !stream.send_continue()) return after::close;
      auto read = read_body(stream, head, body);
      if (read != after::next) return read;
    }
    if (auto refused = take_segments(stream, head, c)) return *refused;
    thread_local http_reply reply;
    reply.reset();
    try {
      (*handler)(http_request{head, path, body, rest, c.exchange.get()}, reply);
    } catch (const std::exception& e) {
      return answer(stream, head, 500, "internal", e.what(), c);
    }
    return write(stream, head, reply, c);
  }

  // On the unix socket: the shared-memory segments the request brought, and
  // its word on those the last reply lent (wire/shared_memory.hpp). A
  // request whose segments are not what it says gets 400.
  std::optional<after> take_segments(deadline_stream& stream,
                                     const http1::request_head& head, connection& c) {
    if (!c.exchange) return std::nullopt;
    try {
      if (c.descriptors.truncated) {
        c.descriptors.truncated = false;
        c.descriptors.close_all();
        throw segment_error("more descriptors came than a message may bring (" +
                            std::to_string(max_descriptors) + ")");
      }
      c.exchange->received([&](std::string_view name) { return head.field_value(name); },
                           c.descriptors.fds, body_limit_);
    } catch (const segment_error& e) {
      return answer(stream, head, 400, protocol::error::bad_request, e.what(), c);
    }
    return std::nullopt;
  }

  // The request's body, into this thread's buffer; `body` views it.
  after read_body(deadline_stream& stream, const http1::request_head& head,
                  std::string_view& body) {
    thread_local std::string buffer;  // its size only grows: no zeroing per call
    drop_if_large(buffer);
    if (head.length) {
      if (buffer.size() < *head.length) buffer.resize(*head.length);
      if (!stream.read_body(buffer.data(), *head.length)) return cut_off(stream);
      body = std::string_view(buffer.data(), *head.length);
      return after::next;
    }
    std::size_t size = 0;
    for (;;) {
      std::string_view line;
      if (!stream.read_line(line)) return cut_off(stream);
      auto chunk = http1::chunk_size(line);
      if (!chunk)
        return refuse(stream, 400, protocol::error::bad_request,
                      "a malformed chunk size line: '" + http1::printable(line) + "'");
      if (*chunk == 0) break;
      if (body_limit_ && *chunk > body_limit_ - size)
        return refuse(stream, 413, protocol::error::payload_too_large,
                      too_large_message());
      if (buffer.size() < size + *chunk)
        buffer.resize(std::max(size + *chunk, std::min(2 * buffer.size(), body_limit_)));
      if (!stream.read_body(buffer.data() + size, *chunk)) return cut_off(stream);
      size += *chunk;
      if (!stream.read_line(line) || !line.empty())
        return refuse(stream, 400, protocol::error::bad_request,
                      "a chunk longer than its size line says");
    }
    // Trailer fields carry nothing a handler here uses.
    for (std::size_t trailers = 0;;) {
      std::string_view line;
      if (!stream.read_line(line)) return cut_off(stream);
      if (line.empty()) break;
      if ((trailers += line.size() + 2) > deadline_stream::head_limit)
        return refuse(stream, 431, protocol::error::headers_too_large,
                      "the request's trailers are too large");
    }
    body = std::string_view(buffer.data(), size);
    return after::next;
  }

  std::string too_large_message() const {
    return "the body is larger than this node accepts (" + std::to_string(body_limit_) +
           " bytes, --lp_max_body_mb)";
  }

  // Writes `reply`; the connection goes on if both sides want it to. A
  // small body joins the head, to leave in one segment; a large one is
  // written from where it is.
  after write(deadline_stream& stream, const http1::request_head& head, http_reply& reply,
              connection& c) {
    bool keep = head.keep_alive && !reply.close && !stopping_;
    bool with_body = head.method != "HEAD";
    std::string_view whole[] = {reply.body};
    std::span<const std::string_view> body = whole;
    if (!reply.pieces.empty()) body = reply.pieces;
    std::size_t size = 0;
    for (auto piece : body) size += piece.size();
    thread_local std::string text;
    text.clear();
    text += "HTTP/1.1 ";
    text += std::to_string(reply.status);
    text += ' ';
    text += reason_phrase(reply.status);
    text += "\r\nContent-Length: ";
    text += std::to_string(size);
    if (!reply.content_type.empty()) {
      text += "\r\nContent-Type: ";
      text += reply.content_type;
    }
    for (const auto& [name, value] : reply.headers) {
      text += "\r\n";
      text += name;
      text += ": ";
      text += value;
    }
    if (!keep)
      text += "\r\nConnection: close";
    else if (head.http10)
      text += "\r\nConnection: keep-alive";
    text += "\r\n";
    if (c.exchange) c.exchange->head_lines(text);
    text += "\r\n";
    if (!with_body) {
      body = {};
    } else if (size <= streamed_body) {
      for (auto piece : body) text += piece;
      body = {};
    }
    bool sent =
        stream.write_reply(text, body, c.exchange ? c.exchange->descriptor() : -1);
    if (c.exchange) c.exchange->done(sent);
    drop_if_large(text);
    if (written_) written_();
    return sent && keep ? after::next : after::close;
  }

  // An error reply of the listener's own, with the refusal body.
  after answer(deadline_stream& stream, const http1::request_head& head, int status,
               std::string_view code, const std::string& message, connection& c) {
    http_reply reply;
    reply.status = status;
    reply.set_content(refusal_(code, message), protocol::media::json);
    return write(stream, head, reply, c);
  }

  // A request that cannot be read on: answered, and the connection ends
  // (what is left of it would be taken for the next request).
  after refuse(deadline_stream& stream, int status, std::string_view code,
               const std::string& message) {
    stream.send_now(reply_text(status, code, message));
    return after::close_unread;
  }

  // A read that failed: 408 if a deadline passed, else the peer has gone.
  after cut_off(deadline_stream& stream) {
    auto late = stream.timed_out();
    if (late == deadline_stream::phase::headers)
      return refuse(
          stream, 408, "request_timeout",
          "the request's headers did not all arrive within " +
              std::to_string(limits_.header_timeout.count() / 1000) +
              " s of its first byte (--lp_header_timeout_secs), or nothing came for " +
              std::to_string(limits_.read_timeout.count() / 1000) + " s");
    if (late == deadline_stream::phase::body)
      return refuse(stream, 408, "request_timeout",
                    "the request's body came slower than " +
                        std::to_string(limits_.min_bytes_per_second >> 10) +
                        " KiB/s (--lp_min_rate_kib_per_sec), or nothing came for " +
                        std::to_string(limits_.read_timeout.count() / 1000) + " s");
    return after::close_unread;
  }

  // Hands `c` to the parking until its next request comes (then a pool
  // thread serves it) or `idle_until` passes (then it closes). False if
  // the server is stopping: the caller still has it.
  bool park(const std::shared_ptr<connection>& c, clock::time_point idle_until) {
    return parking_->park(c->socket, idle_until, [this, c, idle_until](bool ready) {
      if (ready)
        pool_.enqueue([this, c, idle_until] { serve(c, idle_until); });
      else
        end(*c, false);
    });
  }

  void end(connection& c, bool unread) {
    if (c.session) c.session->close();
    close_socket(c.socket, unread);
  }

  // The TLS handshake of a new connection, on its non-blocking socket,
  // within the header timeout: a peer that stays silent holds its thread
  // no longer. False if it failed; the peer learns why from the alert
  // OpenSSL sent, if any, and nothing else.
  bool handshake(connection& c) const {
    int flags = ::fcntl(c.socket, F_GETFL);
    if (flags < 0 || ::fcntl(c.socket, F_SETFL, flags | O_NONBLOCK) < 0) return false;
    try {
      c.session.emplace(*tls_, c.socket, tls_session::role::server);
    } catch (const std::exception&) {
      return false;
    }
    return c.session->handshake(clock::now() + limits_.header_timeout) ==
           tls_session::trouble::none;
  }

  // A whole error reply, to be sent in one write that never waits: it fits
  // in the socket's buffer, and a peer that left loses nothing it wanted.
  std::string reply_text(int status, std::string_view code,
                         const std::string& message) const {
    auto body = refusal_(code, message);
    return "HTTP/1.1 " + std::to_string(status) + " " +
           std::string(reason_phrase(status)) +
           "\r\nContent-Type: " + protocol::media::json +
           "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }

  // Closes so that the peer gets our reply and a FIN rather than a reset,
  // which would throw away the reply it has not read yet. A request left
  // `unread` (refused or cut off mid-way) may still be arriving: its bytes
  // are read and dropped for a moment after our FIN, so that the close
  // finds none unread.
  static void close_socket(int socket, bool unread) {
    char scratch[16 << 10];
    ::shutdown(socket, SHUT_WR);
    auto until = clock::now() + std::chrono::milliseconds(unread ? 500 : 0);
    for (int i = 0; i < 256; ++i) {
      ssize_t got = ::recv(socket, scratch, sizeof scratch, MSG_DONTWAIT);
      if (got > 0) continue;
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now());
      pollfd watched{socket, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&watched, 1, static_cast<int>(left.count())) <= 0)
        break;
    }
    ::close(socket);
  }

  const server_limits limits_;
  const std::size_t cap_;  // max_connections, within the file descriptors
  http_routes routes_;
  std::shared_ptr<const tls_context> tls_;  // null: plain HTTP
  std::size_t body_limit_ = std::size_t{64} << 20;
  refusal_body refusal_ = [](std::string_view code, const std::string& message) {
    return protocol::encode(protocol::error_body(code, message, "", ""),
                            protocol::format::json);
  };
  std::function<void()> written_;
  std::atomic<std::size_t> open_{0};  // from accept to close
  std::atomic<bool> stopping_{false};
  int listening_ = -1;
  int local_ = -1;  // the unix socket, if any
  std::string local_path_;
  int wake_ = -1;                                // an eventfd that stop() writes
  std::unique_ptr<connection_parking> parking_;  // from start()
  thread_pool pool_;
  std::thread thread_;  // last: it uses the rest
};

}  // namespace lp::detail
