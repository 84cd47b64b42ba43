#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/tls/session.hpp>
#include <launchpad/detail/util/spin_wait.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <span>
#include <string>
#include <string_view>

namespace lp::detail {

// One connection's socket as a server reads its requests and writes its
// replies, with deadlines over whole requests. A deadline on each read (5 s,
// server_limits::read_timeout) alone would let a peer sending a byte every
// 2 s hold the connection and its thread forever; this one also bounds
//   - a request's head: all of it within header_timeout of its first byte,
//     however it trickles;
//   - its body, and the reply: byte n by header_timeout + n / min_rate after
//     the head (the reply: after its first byte is written), so on average
//     at least min_rate once the start is spent.
// A read or write first tries the socket without waiting; only when it
// would block is there a wait, a poll() until the nearest of the read
// (write) timeout and that deadline, so no read can outlive it. A deadline
// that passes fails the request: reads and writes fail from then on, and
// the connection loop answers 408 itself (if the reply had not begun) and
// closes. A head is read into the stream's buffer and parsed there; a body
// goes from the buffer and then straight from the socket into the caller's
// memory; a reply leaves in one sendmsg of its head and body's pieces, so
// that a small one is one segment and its caller wakes once. With a TLS
// session, bytes go through it: the socket is then non-blocking, and each
// wait is for what the session asks. On a unix socket, the descriptors
// that come with the bytes are kept (`descriptors`), and a reply may send
// one (the shared-memory segment of its arrays: wire/shared_memory.hpp).
class deadline_stream {
 public:
  using clock = std::chrono::steady_clock;
  enum class phase { idle, headers, body, reply };
  // What reading a request's head found: all of it; nothing, the peer
  // having closed before its first byte; more than the buffer holds; or a
  // failure (the peer's end, an error, a deadline: timed_out() tells).
  enum class head_read { whole, none, too_large, failed };

  // The largest head read: request line and fields.
  static constexpr std::size_t head_limit = 64 << 10;

  deadline_stream(int socket, const server_limits& limits, tls_session* tls = nullptr,
                  received_descriptors* descriptors = nullptr)
      : socket_(socket), limits_(limits), tls_(tls), descriptors_(descriptors) {}
  deadline_stream(const deadline_stream&) = delete;
  deadline_stream& operator=(const deadline_stream&) = delete;

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

  // Reads a request's head into `head`: its request line up to the CRLF of
  // its last field line, without the empty line that ends it; a view into
  // the stream's buffer, valid until the next read. Empty lines before the
  // request line are skipped, as RFC 9112 has a server do.
  head_read read_head(std::string_view& head) {
    while (filled_ - used_ >= 2 && buffer_[used_] == '\r' && buffer_[used_ + 1] == '\n')
      used_ += 2;
    bool first = used_ == filled_;
    switch (read_until("\r\n\r\n", head)) {
      case until::found:
        head.remove_suffix(2);
        return head_read::whole;
      case until::full:
        return head_read::too_large;
      case until::ended:
        return first ? head_read::none : head_read::failed;
      default:
        return head_read::failed;
    }
  }

  // The head has been read: the body's clock starts.
  void headers_read() {
    if (phase_ != phase::headers) return;
    phase_ = phase::body;
    started_ = clock::now();
    moved_ = 0;
  }

  // Fills [into, into + size) with the body's next bytes: what the buffer
  // holds, then straight from the socket. False at the peer's end, on an
  // error or a deadline.
  bool read_body(char* into, std::size_t size) {
    std::size_t got = std::min(size, filled_ - used_);
    std::memcpy(into, buffer_ + used_, got);
    used_ += got;
    while (got < size) {
      ssize_t more = receive(into + got, size - got);
      if (more <= 0) return false;
      got += static_cast<std::size_t>(more);
      moved_ += static_cast<std::size_t>(more);
    }
    return true;
  }

  // One CRLF-terminated line of a chunked body's framing, without its CRLF;
  // a view valid until the next read. False if it is longer than the buffer,
  // cut off, or late.
  bool read_line(std::string_view& line) {
    if (read_until("\r\n", line) != until::found) return false;
    line.remove_suffix(2);
    return true;
  }

  // "100 Continue", for a peer that waits for it before it sends its body.
  bool send_continue() {
    return send_all(std::string_view("HTTP/1.1 100 Continue\r\n\r\n"));
  }

  // Writes a reply, its head and its body's pieces, in as few sends as the
  // socket takes: a small reply is one segment; with `descriptor` (>= 0,
  // a unix socket's) sent along. False if it could not; the connection is
  // then of no more use.
  bool write_reply(std::string_view head, std::span<const std::string_view> body,
                   int descriptor = -1) {
    if (timed_out_ != phase::idle) return false;
    phase_ = phase::reply;
    started_ = clock::now();
    moved_ = 0;
    if (tls_) {
      // One record for a small reply, as one segment for plain HTTP.
      std::size_t size = head.size();
      for (auto piece : body) size += piece.size();
      if (size <= joined_limit) {
        std::string joined(head);
        for (auto piece : body) joined += piece;
        return send_all(joined);
      }
      if (!send_all(head)) return false;
      for (auto piece : body)
        if (!send_all(piece)) return false;
      return true;
    }
    constexpr std::size_t batch = 64;  // pieces per sendmsg, well under IOV_MAX
    descriptor_to_send attached(descriptor);
    iovec vectors[batch];
    std::size_t next = 0;  // the first piece not in `vectors` yet; head is piece -1
    bool head_left = true;
    while (head_left || next < body.size()) {
      std::size_t count = 0;
      if (head_left && !head.empty())
        vectors[count++] = {const_cast<char*>(head.data()), head.size()};
      head_left = false;
      for (; next < body.size() && count < batch; ++next)
        if (!body[next].empty())
          vectors[count++] = {const_cast<char*>(body[next].data()), body[next].size()};
      if (!send_vectors(vectors, count, attached)) return false;
    }
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

  // The phase a deadline passed in, or idle if none did.
  phase timed_out() const { return timed_out_; }

  // Whether bytes of a next request are here already (a pipelined one).
  bool buffered() const { return used_ < filled_ || (tls_ && tls_->buffered()); }

 private:
  enum class until { found, full, ended, failed };

  // Reads until the buffer holds `end`; `text` views the bytes up to and
  // including it, which are taken. `full` if the buffer fills first,
  // `ended` at the peer's end, `failed` on an error or a deadline.
  until read_until(std::string_view end, std::string_view& text) {
    for (std::size_t searched = used_;;) {
      std::string_view pending(buffer_ + used_, filled_ - used_);
      auto at = pending.find(end, searched - used_);
      if (at != std::string_view::npos) {
        text = pending.substr(0, at + end.size());
        used_ += at + end.size();
        return until::found;
      }
      // A match may begin in the last bytes searched.
      searched = std::max(used_, filled_ - std::min(filled_, end.size() - 1));
      if (filled_ == sizeof buffer_) {
        if (used_ == 0) return until::full;
        std::memmove(buffer_, buffer_ + used_, filled_ - used_);
        searched -= used_;
        filled_ -= used_;
        used_ = 0;
      }
      ssize_t got = receive(buffer_ + filled_, sizeof buffer_ - filled_);
      if (got == 0) return until::ended;
      if (got < 0) return until::failed;
      filled_ += static_cast<std::size_t>(got);
      if (phase_ == phase::body) moved_ += static_cast<std::size_t>(got);
    }
  }

  // Up to `size` bytes once the socket has some: 0 at the peer's end, -1 on
  // an error or a deadline.
  ssize_t receive(char* into, std::size_t size) {
    if (!tls_) {
      for (;;) {
        ssize_t got = descriptors_ ? receive_with_descriptors(socket_, into, size,
                                                              MSG_DONTWAIT, *descriptors_)
                                   : ::recv(socket_, into, size, MSG_DONTWAIT);
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

  bool send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t sent = transmit(bytes.data(), bytes.size());
      if (sent < 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      moved_ += static_cast<std::size_t>(sent);
    }
    return true;
  }

  // Sends every byte `vectors` point to, moving them along as they go, the
  // descriptor (if any) with the first that leave.
  bool send_vectors(iovec* vectors, std::size_t count, descriptor_to_send& attached) {
    while (count > 0) {
      msghdr message{};
      message.msg_iov = vectors;
      message.msg_iovlen = count;
      attached.attach(message);
      ssize_t sent = ::sendmsg(socket_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLOUT)) return false;
        continue;
      }
      attached.sent();
      moved_ += static_cast<std::size_t>(sent);
      for (auto left = static_cast<std::size_t>(sent);
           left > 0 || (count > 0 && vectors->iov_len == 0);) {
        if (vectors->iov_len <= left) {
          left -= vectors->iov_len;
          ++vectors;
          --count;
          continue;
        }
        vectors->iov_base = static_cast<char*>(vectors->iov_base) + left;
        vectors->iov_len -= left;
        left = 0;
      }
    }
    return true;
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
    auto earned = std::chrono::microseconds(static_cast<long long>(
        static_cast<double>(moved_) / static_cast<double>(rate) * 1e6));
    return started_ + limits_.header_timeout +
           std::chrono::duration_cast<clock::duration>(earned);
  }

  // Until the socket is ready for `events`, the per-read (write) timeout or
  // the phase's deadline; the deadline's passing fails the request.
  bool wait(short events) const {
    auto now = clock::now();
    auto until = now + (events == POLLIN ? limits_.read_timeout : limits_.write_timeout);
    if (phase_ != phase::idle) until = std::min(until, deadline());
    int ready = poll_for(events, until);
    if (ready > 0) return true;
    if (ready == 0) timed_out_ = phase_;
    return false;
  }

  // Whether `events` came by `until`. A socket is asked at least once, so
  // that what came by a deadline now past is still found.
  int poll_for(short events, clock::time_point until) const {
    if (spin_(socket_, events)) return 1;
    for (;;) {
      auto left = std::max<long long>(
          std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count(), 0);
      pollfd watched{socket_, events, 0};
      int ready =
          ::poll(&watched, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (ready >= 0 || errno != EINTR) return ready;
    }
  }

  const int socket_;
  const server_limits& limits_;
  tls_session* const tls_;                   // null: plain HTTP
  received_descriptors* const descriptors_;  // a unix socket's; else null
  phase phase_ = phase::idle;
  clock::time_point started_{};
  std::size_t moved_ = 0;  // bytes of this phase's body or reply so far
  mutable phase timed_out_ = phase::idle;
  mutable spin_wait spin_;
  // A TLS reply up to this size leaves as one record.
  static constexpr std::size_t joined_limit = 16 << 10;
  std::size_t used_ = 0, filled_ = 0;
  char buffer_[head_limit];
};

}  // namespace lp::detail
