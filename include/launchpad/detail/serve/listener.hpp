#pragma once

#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <iostream>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
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

// What a server puts up with from its peers (docs/protocol.md, "Limits").
// The --lp_ flags of the same names set a node's.
struct server_limits {
  // From a request's first byte to the end of its headers
  // (--lp_header_timeout_secs); also the start a body or a reply gets before
  // its rate counts.
  std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
  // The slowest average rate at which a peer may send a body or read a
  // reply, after header_timeout (--lp_min_rate_kib_per_sec).
  std::size_t min_bytes_per_second = std::size_t{64} << 10;
  // Open connections, each served by a thread; more are answered 503 on the
  // accepting thread and closed (--lp_max_connections). At most half of
  // this process's file descriptors (ulimit -n).
  std::size_t max_connections = 2048;
};

// Why a server refuses, or gives up on, a request: an error body of the
// protocol (code, message), in JSON.
using refusal_body = std::function<std::string(std::string_view code, const std::string& message)>;

// The connections a server may hold: max_connections, but at most half of
// the file descriptors this process may open, so that neither a flood nor
// the node's own calls and files run out of them. (The soft limit is not
// raised here: code of the user's that uses select() breaks on descriptors
// past 1023.)
inline std::size_t connection_cap(std::size_t wanted) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return wanted;
  auto half = std::max<std::size_t>(static_cast<std::size_t>(files.rlim_cur) / 2, 16);
  if (wanted <= half) return wanted;
  // The default quietly; a number asked for with a word.
  static std::atomic<bool> told{false};
  if (wanted != server_limits{}.max_connections && !told.exchange(true))
    std::cerr << "[lp] --lp_max_connections=" << wanted << " lowered to " << half
              << ": this process may open " << files.rlim_cur
              << " files (raise it with ulimit -n)" << std::endl;
  return half;
}

// One connection's socket as httplib reads and writes it, with deadlines
// over whole requests. httplib's own stream bounds each read (5 s by
// default), so a peer sending a byte every 2 s would hold the connection and
// its thread forever; this one also bounds
//   - a request's headers: all of them within header_timeout of its first
//     byte, however they trickle;
//   - its body, and the reply: byte n by header_timeout + n / min_rate after
//     the headers (the reply: after its first byte is written), so on
//     average at least min_rate once the start is spent.
// Every wait is a poll() until the nearest of the read (write) timeout and
// that deadline, so no read can outlive it. A deadline that passes fails
// the request: reads and writes fail from then on, httplib gives up, and
// the connection loop answers 408 itself (if the reply had not begun) and
// closes. Reads are buffered, since httplib reads a request's lines a byte
// at a time.
class deadline_stream final : public httplib::Stream {
 public:
  using clock = std::chrono::steady_clock;
  enum class phase { idle, headers, body, reply };

  deadline_stream(socket_t socket, const server_limits& limits,
                  std::chrono::milliseconds read_timeout, std::chrono::milliseconds write_timeout)
      : socket_(socket), limits_(limits), read_timeout_(read_timeout),
        write_timeout_(write_timeout) {}

  // Waits up to `idle` for the next request's first byte; true when it has
  // come (or the peer hung up, which the next read sees), and the request's
  // clock starts.
  bool next_request(std::chrono::milliseconds idle) {
    if (used_ == filled_ && poll_for(POLLIN, clock::now() + idle) <= 0) return false;
    phase_ = phase::headers;
    started_ = clock::now();
    moved_ = 0;
    timed_out_ = phase::idle;
    return true;
  }

  // httplib has read the headers; the body's clock starts.
  void headers_read() {
    if (phase_ != phase::headers) return;
    phase_ = phase::body;
    started_ = clock::now();
    moved_ = 0;
  }

  // The phase a deadline passed in, or idle if none did.
  phase timed_out() const { return timed_out_; }

  bool is_readable() const override { return used_ < filled_ || wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char* ptr, std::size_t size) override {
    if (timed_out_ != phase::idle) return -1;
    if (used_ == filled_) {
      if (!wait(POLLIN)) return -1;
      // A large read goes straight to the caller's buffer.
      bool direct = size >= sizeof buffer_;
      ssize_t got = ::recv(socket_, direct ? ptr : buffer_, direct ? size : sizeof buffer_, 0);
      if (got <= 0) return got;
      if (phase_ == phase::body) moved_ += static_cast<std::size_t>(got);
      if (direct) return got;
      used_ = 0;
      filled_ = static_cast<std::size_t>(got);
    }
    std::size_t n = std::min(size, filled_ - used_);
    std::memcpy(ptr, buffer_ + used_, n);
    used_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, std::size_t size) override {
    if (timed_out_ != phase::idle) return -1;
    // Written while the headers are read: an interim "100 Continue", after
    // them and before the body, whose clock starts. Else the reply begins.
    if (phase_ == phase::headers) headers_read();
    else if (phase_ != phase::reply) {
      phase_ = phase::reply;
      started_ = clock::now();
      moved_ = 0;
    }
    if (!wait(POLLOUT)) return -1;
    ssize_t sent = ::send(socket_, ptr, size, MSG_NOSIGNAL);
    if (sent > 0 && phase_ == phase::reply) moved_ += static_cast<std::size_t>(sent);
    return sent;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(::getsockname, ip, port);
  }
  socket_t socket() const override { return socket_; }

 private:
  // When this phase must have moved one more byte.
  clock::time_point deadline() const {
    if (phase_ == phase::headers) return started_ + limits_.header_timeout;
    auto rate = std::max<std::size_t>(limits_.min_bytes_per_second, 1);
    auto earned = std::chrono::microseconds(
        static_cast<long long>(static_cast<double>(moved_) / static_cast<double>(rate) * 1e6));
    return started_ + limits_.header_timeout +
           std::chrono::duration_cast<clock::duration>(earned);
  }

  // Until the socket is ready for `events`, the per-read (write) timeout or
  // the phase's deadline; the deadline's passing fails the request.
  bool wait(short events) const {
    auto now = clock::now();
    auto until = now + (events == POLLIN ? read_timeout_ : write_timeout_);
    if (phase_ != phase::idle) until = std::min(until, deadline());
    int ready = poll_for(events, until);
    if (ready > 0) return true;
    if (ready == 0) timed_out_ = phase_;
    return false;
  }

  int poll_for(short events, clock::time_point until) const {
    for (;;) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
      if (left <= 0) return 0;
      pollfd watched{socket_, events, 0};
      int ready = ::poll(&watched, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (ready >= 0 || errno != EINTR) return ready;
    }
  }

  template <class Query>
  void address_of(Query query, std::string& ip, int& port) const {
    sockaddr_storage where{};
    socklen_t length = sizeof where;
    ip.clear();
    port = 0;
    if (query(socket_, reinterpret_cast<sockaddr*>(&where), &length) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (where.ss_family == AF_INET) {
      auto& v4 = reinterpret_cast<const sockaddr_in&>(where);
      if (::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text)) ip = text;
      port = ntohs(v4.sin_port);
    } else if (where.ss_family == AF_INET6) {
      auto& v6 = reinterpret_cast<const sockaddr_in6&>(where);
      if (::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text)) ip = text;
      port = ntohs(v6.sin6_port);
    }
  }

  const socket_t socket_;
  const server_limits& limits_;
  const std::chrono::milliseconds read_timeout_, write_timeout_;
  phase phase_ = phase::idle;
  clock::time_point started_{};
  std::size_t moved_ = 0;  // bytes of this phase's body or reply so far
  mutable phase timed_out_ = phase::idle;
  std::size_t used_ = 0, filled_ = 0;
  char buffer_[16 << 10];
};

// httplib calls a task queue's enqueue on its accepting thread, once per
// accepted connection. This one runs each connection on a thread of an
// elastic pool (cpp-httplib's own pool holds one thread per keep-alive
// connection for as long as the connection lives, so a fixed pool of 8 makes
// the 9th client wait for seconds), up to `cap` connections at once; past
// the cap it runs the connection's job right there, flagged, and the server
// answers 503 and closes without a thread (listener::refusing).
class connection_queue final : public httplib::TaskQueue {
 public:
  explicit connection_queue(std::size_t cap) : cap_(cap), pool_(cap) {}
  void enqueue(std::function<void()> job) override {
    // Only this thread adds to open_, so the check holds until the add.
    if (open_.load() >= cap_) {
      refusing() = true;
      job();
      refusing() = false;
      return;
    }
    open_.fetch_add(1);
    pool_.enqueue([this, job = std::move(job)] {
      job();
      open_.fetch_sub(1);
    });
  }
  void shutdown() override { pool_.shutdown(); }

  // Whether this thread's connection is one past the cap.
  static bool& refusing() {
    thread_local bool past_cap = false;
    return past_cap;
  }

 private:
  const std::size_t cap_;
  std::atomic<std::size_t> open_{0};
  thread_pool pool_;  // last: its threads use open_
};

// An httplib server set up the way every server of a launch needs it, and
// run on a thread of its own.
class listener {
 public:
  explicit listener(server_limits limits = {}) : server_(limits) {
    std::size_t cap = server_.cap;
    server_.new_task_queue = [cap] { return new connection_queue(cap); };
    server_.set_tcp_nodelay(true);
    // Accepted connections inherit the listening socket's buffer sizes.
    server_.set_socket_options(large_socket_buffers);
    // httplib calls this once a request's headers are read, before its body.
    server_.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
      if (auto* stream = server_with_limits::current()) stream->headers_read();
      return httplib::Server::HandlerResponse::Unhandled;
    });
  }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() { stop(); }

  httplib::Server& server() { return server_; }

  // Connections being served now (not those refused past the cap).
  std::size_t open_connections() const {
    return server_.open.load(std::memory_order_relaxed);
  }

  // The body of the 408 and 503 replies the listener writes itself; by
  // default the protocol's error body without a node.
  void set_refusal_body(refusal_body body) { server_.refusal = std::move(body); }

  // Binds host:port (port 0: any free port) and serves; returns the port,
  // or -1 if it cannot bind. Connections are accepted once it returns.
  int start(const std::string& host, int port) {
    int bound = port;
    if (port == 0) bound = server_.bind_to_any_port(host);
    else if (!server_.bind_to_port(host, port)) bound = -1;
    if (bound < 0) return -1;
    // Debian's libcpp-httplib was built with a listen backlog of 5, so a
    // burst of new connections (64 node processes starting) would wait for
    // SYN retries; widen it.
    server_.widen_backlog();
    // The socket listens already: a peer's connection waits in the backlog
    // until the thread accepts it.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return bound;
  }

  // Stops accepting and waits for the connection threads.
  void stop() {
    if (!thread_.joinable()) return;
    server_.close_listening_socket();
    thread_.join();
  }

  bool running() const { return thread_.joinable(); }

 private:
  struct server_with_limits : httplib::Server {
    explicit server_with_limits(server_limits l)
        : limits(l), cap(connection_cap(l.max_connections)) {}

    void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
    // What httplib's stop() does, but also before its accept loop has
    // started (where stop() does nothing, and the loop would then run
    // forever): the loop ends when it finds the socket gone.
    void close_listening_socket() {
      socket_t socket = svr_sock_.exchange(INVALID_SOCKET);
      if (socket == INVALID_SOCKET) return;
      ::shutdown(socket, SHUT_RDWR);
      ::close(socket);
    }

    // The stream of this thread's connection, for the pre-routing handler.
    static deadline_stream*& current() {
      thread_local deadline_stream* stream = nullptr;
      return stream;
    }

    const server_limits limits;
    const std::size_t cap;  // max_connections, within the file descriptors
    std::atomic<std::size_t> open{0};
    refusal_body refusal = [](std::string_view code, const std::string& message) {
      return protocol::encode(protocol::error_body(code, message, "", ""), protocol::format::json);
    };

   private:
    // httplib's accepting thread hands every connection here, on a pool
    // thread, or on itself for one past the cap. This is httplib's
    // keep-alive loop, over a deadline_stream instead of its own.
    bool process_and_close_socket(socket_t socket) override {
      if (connection_queue::refusing()) {
        answer(socket, 503, "Service Unavailable", "overloaded",
               "this node has " + std::to_string(cap) +
                   " connections open, its limit (--lp_max_connections); try again later, "
                   "or launch it with a higher --lp_max_connections");
        return close_socket(socket);
      }
      using std::chrono::milliseconds, std::chrono::seconds, std::chrono::microseconds;
      auto read_timeout = std::chrono::duration_cast<milliseconds>(
          seconds(read_timeout_sec_) + microseconds(read_timeout_usec_));
      auto write_timeout = std::chrono::duration_cast<milliseconds>(
          seconds(write_timeout_sec_) + microseconds(write_timeout_usec_));
      deadline_stream stream(socket, limits, read_timeout, write_timeout);
      current() = &stream;
      open.fetch_add(1, std::memory_order_relaxed);
      struct closing {
        std::atomic<std::size_t>& open;
        ~closing() { open.fetch_sub(1, std::memory_order_relaxed); }
      } counted{open};
      bool served = false;
      for (auto left = keep_alive_max_count_;
           left > 0 && svr_sock_ != INVALID_SOCKET &&
           stream.next_request(seconds(keep_alive_timeout_sec_));
           --left) {
        bool closed = false;
        served = process_request(stream, left == 1, closed, nullptr);
        if (auto late = stream.timed_out(); late != deadline_stream::phase::idle) {
          if (late == deadline_stream::phase::headers)
            answer(socket, 408, "Request Timeout", "request_timeout",
                   "the request's headers did not all arrive within " +
                       std::to_string(limits.header_timeout.count() / 1000) +
                       " s of its first byte (--lp_header_timeout_secs), or nothing came for " +
                       std::to_string(read_timeout.count() / 1000) + " s");
          else if (late == deadline_stream::phase::body)
            answer(socket, 408, "Request Timeout", "request_timeout",
                   "the request's body came slower than " +
                       std::to_string(limits.min_bytes_per_second >> 10) +
                       " KiB/s (--lp_min_rate_kib_per_sec), or nothing came for " +
                       std::to_string(read_timeout.count() / 1000) + " s");
          break;
        }
        if (!served || closed) break;
      }
      current() = nullptr;
      return close_socket(socket) && served;
    }

    // A whole reply, in one send that never waits: it fits in the socket's
    // buffer, and a peer that left loses nothing it wanted.
    void answer(socket_t socket, int status, std::string_view reason, std::string_view code,
                const std::string& message) {
      auto body = refusal(code, message);
      auto reply = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                   "\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      [[maybe_unused]] auto sent = ::send(socket, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }

    // Reads what the peer has sent already, so that closing sends it our
    // reply and a FIN rather than a reset, then closes.
    static bool close_socket(socket_t socket) {
      char scratch[4096];
      for (int i = 0; i < 16 && ::recv(socket, scratch, sizeof scratch, MSG_DONTWAIT) > 0; ++i) {
      }
      ::shutdown(socket, SHUT_RDWR);
      return ::close(socket) == 0;
    }
  };

  server_with_limits server_;
  std::thread thread_;
};

}  // namespace lp::detail
