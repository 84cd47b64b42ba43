#pragma once

#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/tls/session.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// One connection's socket as httplib reads and writes it, with deadlines
// over whole requests. httplib's own stream bounds each read (5 s by
// default), so a peer sending a byte every 2 s would hold the connection and
// its thread forever; this one also bounds
//   - a request's headers: all of them within header_timeout of its first
//     byte, however they trickle;
//   - its body, and the reply: byte n by header_timeout + n / min_rate after
//     the headers (the reply: after its first byte is written), so on
//     average at least min_rate once the start is spent.
// A read or write first tries the socket without waiting; only when it
// would block is there a wait, a poll() until the nearest of the read
// (write) timeout and that deadline, so no read can outlive it. A deadline
// that passes fails the request: reads and writes fail from then on,
// httplib gives up, and the connection loop answers 408 itself (if the
// reply had not begun) and closes. Reads are buffered, since httplib reads
// a request's lines a byte at a time. A reply's head is held until its
// body's first bytes, or its end (flush()), so that a small reply leaves in
// one segment and its caller wakes once (httplib writes the two apart).
// With a TLS session, bytes go through it: the socket is then non-blocking,
// and each wait is for what the session asks.
class deadline_stream final : public httplib::Stream {
 public:
  using clock = std::chrono::steady_clock;
  enum class phase { idle, headers, body, reply };

  deadline_stream(socket_t socket, const server_limits& limits,
                  std::chrono::milliseconds read_timeout, std::chrono::milliseconds write_timeout,
                  tls_session* tls = nullptr)
      : socket_(socket), limits_(limits), read_timeout_(read_timeout),
        write_timeout_(write_timeout), tls_(tls) {}

  // Waits up to `idle` for the next request's first byte; true when it has
  // come (or the peer hung up, which the next read sees), and the request's
  // clock starts.
  bool next_request(std::chrono::milliseconds idle) {
    if (used_ == filled_ && !(tls_ && tls_->buffered()) &&
        poll_for(POLLIN, clock::now() + idle) <= 0)
      return false;
    phase_ = phase::headers;
    started_ = clock::now();
    moved_ = 0;
    timed_out_ = phase::idle;
    return true;
  }

  // The request was answered before its body was read (413): the unread
  // body would be taken for the next request, so the connection ends with
  // the reply.
  void close_after_reply() { closing_ = true; }
  bool closing() const { return closing_; }

  // httplib has read the headers; the body's clock starts.
  void headers_read() {
    if (phase_ != phase::headers) return;
    phase_ = phase::body;
    started_ = clock::now();
    moved_ = 0;
  }

  // The phase a deadline passed in, or idle if none did.
  phase timed_out() const { return timed_out_; }

  bool is_readable() const override {
    return used_ < filled_ || (tls_ && tls_->buffered()) || wait(POLLIN);
  }
  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char* ptr, std::size_t size) override {
    if (timed_out_ != phase::idle) return -1;
    // httplib reads a request's lines a byte at a time: no memcpy call.
    if (size == 1 && used_ < filled_) {
      *ptr = buffer_[used_++];
      return 1;
    }
    if (used_ == filled_) {
      // A large read goes straight to the caller's buffer.
      bool direct = size >= sizeof buffer_;
      ssize_t got = receive(direct ? ptr : buffer_, direct ? size : sizeof buffer_);
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
    if (phase_ != phase::reply && (interim_ || interim(ptr, size))) {
      // "100 Continue", after the headers and before the body, whose clock
      // starts: the peer sends the body only once it has this, so it
      // leaves at once, up to its blank line. (httplib 0.18 writes that
      // line apart, and after the pre-routing handler has said the headers
      // are read; 0.11 writes it whole, before.)
      headers_read();
      ssize_t sent = send(ptr, size);
      if (sent > 0) {
        interim_tail_.append(ptr, static_cast<std::size_t>(sent));
        if (interim_tail_.size() > 4) interim_tail_.erase(0, interim_tail_.size() - 4);
        interim_ = interim_tail_ != "\r\n\r\n";
        if (!interim_) interim_tail_.clear();
      }
      return sent;
    }
    if (phase_ != phase::reply) {
      // The reply begins with its head: held for the next write or flush().
      phase_ = phase::reply;
      started_ = clock::now();
      moved_ = 0;
      if (size <= held_limit) {
        held_.assign(ptr, size);
        return static_cast<ssize_t>(size);
      }
    }
    ssize_t sent = send(ptr, size);
    if (sent > 0) moved_ += static_cast<std::size_t>(sent);
    return sent;
  }

  // Sends what write() holds. False if it could not: the connection is
  // then of no more use.
  bool flush() {
    if (held_.empty()) return true;
    std::string_view left = held_;
    while (!left.empty()) {
      ssize_t sent = transmit(left.data(), left.size());
      if (sent < 0) {
        held_.clear();
        closing_ = true;
        return false;
      }
      left.remove_prefix(static_cast<std::size_t>(sent));
    }
    held_.clear();
    return true;
  }

  // Writes what the socket takes of `bytes` now, without waiting and
  // whatever the deadlines: the listener's own last reply (408) before it
  // closes.
  void send_now(std::string_view bytes) {
    if (!tls_) {
      [[maybe_unused]] auto sent =
          ::send(socket_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      return;
    }
    tls_->write(bytes.data(), bytes.size());
  }

  // Asked for every request (httplib 0.11 asks the stream; 0.18 is told
  // them), and the same for the connection's life: asked of the kernel once.
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    if (!remote_) remote_ = address_of(::getpeername);
    ip = remote_->first, port = remote_->second;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    if (!local_) local_ = address_of(::getsockname);
    ip = local_->first, port = local_->second;
  }
  socket_t socket() const override { return socket_; }

 private:
  // Whether a write begins an interim (1xx) reply.
  static bool interim(const char* ptr, std::size_t size) {
    return size >= 10 && std::string_view(ptr, 7) == "HTTP/1." && ptr[9] == '1';
  }

  // Up to `size` bytes once the socket has some: 0 at the peer's end, -1 on
  // an error or a deadline.
  ssize_t receive(char* into, std::size_t size) {
    if (!tls_) {
      for (;;) {
        ssize_t got = ::recv(socket_, into, size, MSG_DONTWAIT);
        if (got >= 0) return got;
        if (errno == EINTR) continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLIN)) return -1;
      }
    }
    for (short events = 0;;) {
      if (events && !wait(events)) return -1;
      auto step = tls_->read(into, size);
      if (step.state == tls_session::step::done) return static_cast<ssize_t>(step.bytes);
      if (step.state == tls_session::step::closed) return 0;
      if (step.state == tls_session::step::failed) return -1;
      events = step.state == tls_session::step::want_read ? POLLIN : POLLOUT;
    }
  }

  // What the socket takes of `size` bytes once it takes some, after all
  // that write() holds (the count is of `from`'s bytes only); -1 on an
  // error or a deadline. A small body joins the held head.
  ssize_t send(const char* from, std::size_t size) {
    if (held_.empty()) return transmit(from, size);
    if (size <= held_limit) {
      held_.append(from, size);
      return flush() ? static_cast<ssize_t>(size) : -1;
    }
    return flush() ? transmit(from, size) : -1;
  }

  ssize_t transmit(const char* from, std::size_t size) {
    if (!tls_) {
      for (;;) {
        ssize_t sent = ::send(socket_, from, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent >= 0) return sent;
        if (errno == EINTR) continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLOUT)) return -1;
      }
    }
    for (short events = 0;;) {
      if (events && !wait(events)) return -1;
      auto step = tls_->write(from, size);
      if (step.state == tls_session::step::done) return static_cast<ssize_t>(step.bytes);
      if (step.state != tls_session::step::want_read &&
          step.state != tls_session::step::want_write)
        return -1;
      events = step.state == tls_session::step::want_read ? POLLIN : POLLOUT;
    }
  }

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

  using ip_and_port = std::pair<std::string, int>;
  template <class Query>
  ip_and_port address_of(Query query) const {
    sockaddr_storage where{};
    socklen_t length = sizeof where;
    if (query(socket_, reinterpret_cast<sockaddr*>(&where), &length) != 0) return {};
    char text[INET6_ADDRSTRLEN] = {};
    if (where.ss_family == AF_INET) {
      auto& v4 = reinterpret_cast<const sockaddr_in&>(where);
      if (!::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text)) return {};
      return {text, ntohs(v4.sin_port)};
    }
    if (where.ss_family == AF_INET6) {
      auto& v6 = reinterpret_cast<const sockaddr_in6&>(where);
      if (!::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text)) return {};
      return {text, ntohs(v6.sin6_port)};
    }
    return {};
  }

  const socket_t socket_;
  const server_limits& limits_;
  const std::chrono::milliseconds read_timeout_, write_timeout_;
  tls_session* const tls_;  // null: plain HTTP
  phase phase_ = phase::idle;
  clock::time_point started_{};
  std::size_t moved_ = 0;  // bytes of this phase's body or reply so far
  mutable phase timed_out_ = phase::idle;
  bool closing_ = false;
  mutable std::optional<ip_and_port> remote_, local_;
  // A reply's head (httplib writes it whole, then the body) is held up to
  // this size, and a body up to this size joins it.
  static constexpr std::size_t held_limit = 8 << 10;
  std::string held_;
  bool interim_ = false;      // an interim reply is being written
  std::string interim_tail_;  // its last bytes, to find its end
  std::size_t used_ = 0, filled_ = 0;
  char buffer_[16 << 10];
};

}  // namespace lp::detail
