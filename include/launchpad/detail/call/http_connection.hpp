#pragma once

// One HTTP/1.1 client connection: a POST and its response for the call
// path, a GET for the status page's poller and --lp_status. httplib's
// client reads a body 4 KB at a time with a poll() before each recv, writes
// headers and body as two segments and copies the body on its way in; here
// a small request is one send, a small reply one poll and one recv, and a
// large body goes between the socket and the caller's buffer without a copy
// in either direction. Over TLS (a launch's nodes beyond loopback, or
// --lp_tls=on), the handshake follows the connect, and the bytes go through
// the session (tls/session.hpp) with the same waits and deadlines. To a
// node on this host it may go over the node's unix socket instead
// (open_local; wire/local_socket.hpp), the same bytes without TCP.

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/tls/session.hpp>
#include <launchpad/detail/util/spin_wait.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/http1.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/detail/wire/reply_sink.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace lp::detail {

class http_connection {
 public:
  using clock = std::chrono::steady_clock;

  // Why an exchange failed. `stale`: a connection that had served earlier
  // requests was found closed by the server before any byte of the response
  // arrived: the request never ran, the caller may retry once on a new
  // connection. `timeout`: the deadline passed. `refused`: connect failed.
  // `tls`: the TLS handshake failed, or the peer refused it (a client
  // without the launch's certificate, a peer of another launch, a peer
  // that does not speak TLS): trying again will not help. `broken`:
  // anything else (malformed response, reply too large, reset
  // mid-response or in the TLS handshake...).
  struct failure : std::runtime_error {
    enum kind_t { refused, stale, timeout, broken, tls } kind;
    failure(kind_t k, const std::string& what) : std::runtime_error(what), kind(k) {}
  };

  struct response {
    int status = 0;
    std::string content_type;   // empty if absent
    std::size_t body_size = 0;  // the body is body_buffer[0, body_size)
    // The body went to the request's reply_sink: body_buffer holds only
    // its first body_size bytes, the sink's place the rest.
    bool placed = false;
  };

  // Connects to host:port (numeric address or name) by `deadline`, and
  // with a TLS context completes the handshake by then too. Throws
  // failure{refused}, failure{timeout} or failure{tls}.
  static std::unique_ptr<http_connection> open(const std::string& host, int port,
                                               clock::time_point deadline,
                                               const tls_context* tls = nullptr) {
    bool literal_v6 = host.find(':') != std::string::npos;
    std::string peer =
        (literal_v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    int resolved =
        ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (resolved != 0) {
      std::string why =
          resolved == EAI_SYSTEM ? error_text(errno) : ::gai_strerror(resolved);
      throw failure(failure::refused, "cannot resolve " + host + ": " + why);
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
    std::string why = "no address";
    for (const addrinfo* a = found; a; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        a->ai_protocol);
      if (fd < 0) {
        why = error_text(errno);
        continue;
      }
      std::unique_ptr<http_connection> connection(new http_connection(fd, peer));
      if (connection->connect_to(*a, deadline, why)) {
        if (tls) connection->start_tls(*tls, deadline);
        return connection;
      }
    }
    throw failure(failure::refused, "cannot connect to " + peer + ": " + why);
  }

  // Connects to the unix socket at `path` (a node on this host) by
  // `deadline`. Throws failure{refused} or failure{timeout}.
  static std::unique_ptr<http_connection> open_local(const std::string& path,
                                                     clock::time_point deadline) {
    std::string peer = "unix:" + path;
    unix_address where(path);
    if (!where.valid())
      throw failure(failure::refused,
                    "cannot connect to " + peer + ": the path is too long");
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      throw failure(failure::refused,
                    "cannot connect to " + peer + ": " + error_text(errno));
    std::unique_ptr<http_connection> connection(new http_connection(fd, peer, false));
    // A connect to a unix socket waits only while the server's backlog is
    // full: bounded by the deadline, with the socket blocking until then.
    for (;;) {
      auto left =
          std::chrono::duration_cast<std::chrono::microseconds>(deadline - clock::now());
      if (left.count() <= 0) connection->time_out("connecting to");
      timeval wait{static_cast<time_t>(left.count() / 1000000),
                   static_cast<suseconds_t>(left.count() % 1000000)};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
      if (::connect(fd, where.get(), where.size()) == 0) break;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EINPROGRESS) connection->time_out("connecting to");
      throw failure(failure::refused,
                    "cannot connect to " + peer + ": " + error_text(errno));
    }
    timeval none{};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return connection;
  }

  // Takes over a connected stream socket (a socketpair's end, in the client
  // fuzzer: tests/fuzz/fuzz_client.cpp); `peer` names it in messages. The
  // socket should be non-blocking, as open() makes its own.
  static std::unique_ptr<http_connection> adopt(int fd, std::string peer) {
    return std::unique_ptr<http_connection>(new http_connection(fd, std::move(peer)));
  }

  ~http_connection() {
    if (tls_) tls_->close();
    ::close(fd_);
  }
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  // POSTs `body` to `path` with the extra header lines `headers` (each
  // "Name: value\r\n"; Host and Content-Length are added here) and reads the
  // response body into body_buffer, which grows when too small and is never
  // shrunk or cleared: a buffer kept by the caller is not rewritten on every
  // call. A body over `max_body` bytes fails without being read.
  response post(std::string_view path, std::string_view headers, std::string_view body,
                clock::time_point deadline, std::string& body_buffer,
                std::size_t max_body) {
    return request(verb::post, path, headers, std::span<const std::string_view>(&body, 1),
                   deadline, body_buffer, max_body);
  }

  // The same with a body in pieces, sent one after the other: a large
  // piece goes out from where it is. A `sink` may take a large response
  // body where it wants it (reply_sink.hpp).
  response post(std::string_view path, std::string_view headers,
                std::span<const std::string_view> body, clock::time_point deadline,
                std::string& body_buffer, std::size_t max_body,
                reply_sink* sink = nullptr) {
    return request(verb::post, path, headers, body, deadline, body_buffer, max_body,
                   sink);
  }

  // GETs `path`, as post() does but with no body (nor Content-Length).
  response get(std::string_view path, std::string_view headers,
               clock::time_point deadline, std::string& body_buffer,
               std::size_t max_body) {
    return request(verb::get, path, headers, {}, deadline, body_buffer, max_body);
  }

  // False after `Connection: close`, an HTTP/1.0 response without
  // keep-alive, a body that ended with the connection, or any failure.
  bool reusable() const { return reusable_; }

  // Whether a byte of the last request's response came.
  bool answered() const { return answered_; }

  // Over a unix socket, the connection's shared memory
  // (wire/shared_memory.hpp): a request sends the segment it packed, and
  // the segments its response brought are mapped there for its reader.
  // Null over TCP.
  segment_exchange* shared() { return shared_.get(); }

 private:
  // Response head, chunk-size line and trailer section limit; also the most
  // asked of one recv into the connection's own buffer.
  static constexpr std::size_t head_limit = std::size_t{64} << 10;

  // Only a POST has a body: a GET's is empty, with no Content-Length.
  enum class verb { get, post };

  struct head {
    int status = 0;
    std::string_view content_type;
    std::optional<std::size_t> length;
    bool chunked = false;
    bool keep_alive = true;
    // The fields of shared memory (bulk_field), copied: the body's reading
    // may move the head's bytes.
    std::string bulk, segments, returned;
  };

  response request(verb method, std::string_view path, std::string_view headers,
                   std::span<const std::string_view> body, clock::time_point deadline,
                   std::string& body_buffer, std::size_t max_body,
                   reply_sink* sink = nullptr) {
    if (!reusable_) fail("this connection to " + peer_ + " cannot carry another request");
    // Any failure below leaves the connection unusable; success decides anew.
    reusable_ = false;
    answered_ = false;
    in_begin_ = in_end_ = 0;
    if (clock::now() >= deadline) time_out("before sending a request to");
    if (std::any_of(path.begin(), path.end(), [](char c) {
          return static_cast<unsigned char>(c) <= ' ' || c == 127;
        }))
      fail("request path '" + http1::printable(path) +
           "' has a space or control character");
    bool sent = send_request(method, path, headers, body, deadline);
    if (shared_) shared_->done(sent);

    head h;
    for (;;) {
      h = parse_head(read_head(deadline));
      if (h.status >= 200) break;
      if (h.status == 101) fail(peer_ + " switched protocols, unasked");
      compact();  // 100 Continue and other interim responses
    }
    response r;
    r.status = h.status;
    r.content_type = h.content_type;
    bool keep = sent && h.keep_alive;
    if (h.status == 204 || h.status == 304) {
      r.body_size = 0;
    } else if (h.chunked) {
      r.body_size = read_chunked(body_buffer, max_body, deadline);
    } else if (h.length) {
      if (*h.length > max_body) too_large(std::to_string(*h.length) + " bytes", max_body);
      r.body_size = *h.length;
      std::size_t lead = 0;
      if (sink && *h.length >= reply_sink::min_body) {
        lead = reply_sink::lead_size;
        if (body_buffer.size() < lead) body_buffer.resize(lead);
        read_exact(body_buffer.data(), lead, deadline);
        if (char* place = sink->place(h.status, h.content_type, *h.length,
                                      std::string_view(body_buffer.data(), lead))) {
          read_exact(place, *h.length - lead, deadline);
          r.body_size = lead;
          r.placed = true;
        }
      }
      if (!r.placed) {
        if (body_buffer.size() < *h.length) body_buffer.resize(*h.length);
        read_exact(body_buffer.data() + lead, *h.length - lead, deadline);
      }
    } else {
      r.body_size = read_to_close(body_buffer, max_body, deadline);
      keep = false;
    }
    // Without pipelining nothing may follow a response; bytes that do mean
    // the framing was misread, and the next response would be wrong.
    if (in_end_ != in_begin_)
      fail(peer_ + " sent " + std::to_string(in_end_ - in_begin_) +
           " bytes after the end of its response");
    if (shared_) take_segments(h, max_body);
    served_ = true;
    reusable_ = keep;
    return r;
  }

  // Over TCP (`tcp`), or a unix socket, whose Host is localhost (as
  // curl --unix-socket sends it).
  http_connection(int fd, std::string peer, bool tcp = true)
      : fd_(fd),
        peer_(std::move(peer)),
        host_line_("Host: " + (tcp ? peer_ : std::string("localhost")) + "\r\n") {
    int on = 1;
    if (tcp)
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    else
      shared_ = std::make_unique<segment_exchange>();
    // Set before connect(): the receive buffer decides the window scale
    // offered in the SYN.
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &socket_buffer_bytes,
                 sizeof socket_buffer_bytes);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &socket_buffer_bytes,
                 sizeof socket_buffer_bytes);
  }

  static std::string error_text(int error) {
    return std::system_category().message(error);
  }

  [[noreturn]] static void fail(const std::string& what) {
    throw failure(failure::broken, what);
  }

  // The segments the response brought, mapped, and its word on those the
  // request lent; a response whose segments are not what it says fails.
  void take_segments(const head& h, std::size_t max_body) {
    try {
      if (descriptors_.truncated) {
        descriptors_.truncated = false;
        descriptors_.close_all();
        throw segment_error("more descriptors came than a message may bring");
      }
      shared_->received(
          [&](std::string_view name) -> std::string_view {
            if (name == bulk_field::bulk) return h.bulk;
            if (name == bulk_field::segments) return h.segments;
            return h.returned;
          },
          descriptors_.fds, max_body);
    } catch (const segment_error& e) {
      fail("the response from " + peer_ + ": " + e.what());
    }
  }
  [[noreturn]] void time_out(const char* doing) const {
    throw failure(failure::timeout,
                  "deadline passed " + std::string(doing) + " " + peer_);
  }
  [[noreturn]] void too_large(const std::string& size, std::size_t max_body) const {
    fail("the response body from " + peer_ + " (" + size +
         ") is larger than the limit of " + std::to_string(max_body) + " bytes");
  }
  // The server hung up where a response should start. On a connection that
  // served before, that is its idle timeout racing this request, which it
  // never read.
  [[noreturn]] void hung_up(const std::string& how) const {
    if (served_ && !answered_)
      throw failure(failure::stale,
                    peer_ + " " + how + " an idle connection; the request did not run");
    fail(peer_ + " " + how + " the connection " +
         (answered_ ? "in the middle of the response" : "before responding"));
  }

  // Waits for `events` until the deadline; returns the events that came.
  short wait(short events, clock::time_point deadline, const char* doing) {
    short came = spin_(fd_, events);
    while (!came) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) time_out(doing);
      pollfd p{fd_, events, 0};
      int ready =
          ::poll(&p, 1, static_cast<int>(std::min<decltype(left)>(left, INT_MAX)));
      if (ready > 0) came = p.revents;
      if (ready < 0 && errno != EINTR) fail("poll: " + error_text(errno));
    }
    if (came & POLLNVAL) fail("poll on the connection to " + peer_ + ": not a socket");
    return came;
  }

  void start_tls(const tls_context& context, clock::time_point deadline) {
    tls_ = std::make_unique<tls_session>(context, fd_, tls_session::role::client);
    if (tls_->handshake(deadline) != tls_session::trouble::none) tls_failed();
  }

  // Why the TLS session failed, for the caller.
  [[noreturn]] void tls_failed() const {
    const auto& why = tls_->error();
    switch (tls_->failure()) {
      case tls_session::trouble::timeout:
        time_out("in the TLS handshake with");
      case tls_session::trouble::peer_refused:
        throw failure(failure::tls,
                      peer_ +
                          " refused the TLS handshake: this client does not "
                          "hold this launch's certificate (" +
                          why + ")");
      case tls_session::trouble::peer_untrusted:
        throw failure(failure::tls,
                      peer_ + " showed a certificate this launch does not trust (" + why +
                          "): is it a node of another launch?");
      case tls_session::trouble::not_tls:
        throw failure(failure::tls, peer_ + " does not speak TLS (" + why +
                                        "): is it a launch with --lp_tls=off?");
      case tls_session::trouble::closed:
        // Before any answer: as a connection closed unanswered, which a
        // node that stops does to connections it took and will not serve.
        throw failure(
            failure::broken,
            peer_ + " closed the connection in the TLS handshake (" + why + ")");
      default:
        throw failure(failure::tls, "TLS with " + peer_ + " failed: " + why);
    }
  }

  // As send_request, through the TLS session: the head (with a small
  // body), then each piece of a large body.
  bool send_tls(std::span<const std::string_view> body, bool body_in_head,
                clock::time_point deadline) {
    auto send = [&](std::string_view bytes) {
      while (!bytes.empty()) {
        auto step = tls_->write(bytes.data(), bytes.size());
        if (step.state == tls_session::step::done) {
          bytes.remove_prefix(step.bytes);
          continue;
        }
        if (step.state == tls_session::step::closed) return false;
        if (step.state == tls_session::step::failed) {
          if (tls_->failure() == tls_session::trouble::peer_refused) tls_failed();
          fail("sending to " + peer_ + ": " + tls_->error());
        }
        if (step.state == tls_session::step::want_read) {
          wait(POLLIN, deadline, "sending a request to");
        } else if (wait(POLLOUT | POLLIN, deadline, "sending a request to") &
                   (POLLIN | POLLERR | POLLHUP)) {
          return false;  // the server answered or hung up first
        }
      }
      return true;
    };
    if (!send(out_)) return false;
    if (!body_in_head)
      for (auto piece : body)
        if (!send(piece)) return false;
    return true;
  }

  bool connect_to(const addrinfo& address, clock::time_point deadline, std::string& why) {
    if (::connect(fd_, address.ai_addr, address.ai_addrlen) == 0) return true;
    // EINTR leaves a non-blocking connect going on, as EINPROGRESS does.
    if (errno != EINPROGRESS && errno != EINTR) {
      why = error_text(errno);
      return false;
    }
    wait(POLLOUT, deadline, "connecting to");
    int error = 0;
    socklen_t size = sizeof error;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    if (error != 0) why = error_text(error);
    return error == 0;
  }

  // False when the server answered or hung up before taking the whole
  // request. A server may refuse a body too large (413) and close without
  // reading it; its response is then what the caller needs to see.
  bool send_request(verb method, std::string_view path, std::string_view headers,
                    std::span<const std::string_view> body, clock::time_point deadline) {
    std::size_t length = 0;
    for (auto piece : body) length += piece.size();
    out_.clear();
    out_.append(method == verb::post ? "POST " : "GET ").append(path);
    out_.append(" HTTP/1.1\r\n").append(host_line_).append(headers);
    if (method == verb::post)
      out_.append("Content-Length: ").append(std::to_string(length)).append("\r\n");
    out_.append("\r\n");
    bool body_in_head = out_.size() + length <= streamed_body;
    if (body_in_head)
      for (auto piece : body) out_.append(piece);
    if (tls_) return send_tls(body, body_in_head, deadline);
    parts_.assign(1, iovec{});
    if (!body_in_head) {
      for (auto piece : body)
        if (!piece.empty())
          parts_.push_back({const_cast<char*>(piece.data()), piece.size()});
    }
    parts_[0] = {out_.data(), out_.size()};
    msghdr message{};
    message.msg_iov = parts_.data();
    message.msg_iovlen = parts_.size();
    // The segment the body's arrays were packed in goes with its first bytes.
    descriptor_to_send attached(shared_ ? shared_->descriptor() : -1);
    for (;;) {
      attached.attach(message);
      ssize_t sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE || errno == ECONNRESET) return false;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          fail("sending to " + peer_ + ": " + error_text(errno));
      } else {
        attached.sent();
      }
      message.msg_control = nullptr;
      message.msg_controllen = 0;
      for (auto left = static_cast<std::size_t>(std::max<ssize_t>(sent, 0)); left > 0;) {
        std::size_t taken = std::min(left, message.msg_iov->iov_len);
        message.msg_iov->iov_base = static_cast<char*>(message.msg_iov->iov_base) + taken;
        message.msg_iov->iov_len -= taken;
        left -= taken;
        if (message.msg_iov->iov_len == 0) {
          ++message.msg_iov;
          --message.msg_iovlen;
        }
      }
      if (message.msg_iovlen == 0) return true;
      // A short write, as EAGAIN, means the socket buffer is full: retrying
      // at once would only fail.
      if (wait(POLLOUT | POLLIN, deadline, "sending a request to") &
          (POLLIN | POLLERR | POLLHUP))
        return false;
    }
  }

  // Up to `size` bytes into `into`; 0 when the server closed the connection.
  std::size_t receive(char* into, std::size_t size, clock::time_point deadline) {
    if (tls_) return receive_tls(into, size, deadline);
    for (;;) {
      wait(POLLIN, deadline, "waiting for the response from");
      ssize_t got = shared_ ? receive_with_descriptors(fd_, into, size, 0, descriptors_)
                            : ::recv(fd_, into, size, 0);
      if (got > 0) {
        answered_ = true;
        return static_cast<std::size_t>(got);
      }
      if (got == 0) return 0;
      if (errno == ECONNRESET) hung_up("reset");
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        fail("receiving from " + peer_ + ": " + error_text(errno));
    }
  }

  std::size_t receive_tls(char* into, std::size_t size, clock::time_point deadline) {
    for (short events = tls_->buffered() ? 0 : POLLIN;;) {
      if (events) wait(events, deadline, "waiting for the response from");
      auto step = tls_->read(into, size);
      if (step.state == tls_session::step::done) {
        answered_ = true;
        return step.bytes;
      }
      if (step.state == tls_session::step::closed) return 0;
      // In TLS 1.3 a server refuses a client's certificate after the
      // client has finished its handshake: the refusal comes here.
      if (step.state == tls_session::step::failed) tls_failed();
      events = step.state == tls_session::step::want_read ? POLLIN : POLLOUT;
    }
  }

  // Reads until in_ holds a whole response head; returns it up to and
  // including the CRLF of its last header line.
  std::string_view read_head(clock::time_point deadline) {
    if (in_.size() < head_limit) in_.resize(head_limit);
    for (std::size_t searched = in_begin_;;) {
      auto end = std::string_view(in_.data(), in_end_).find("\r\n\r\n", searched);
      if (end != std::string_view::npos) {
        std::string_view text(in_.data() + in_begin_, end + 2 - in_begin_);
        in_begin_ = end + 4;
        return text;
      }
      searched = std::max(in_begin_, in_end_ < 3 ? 0 : in_end_ - 3);
      if (in_end_ == in_.size())
        fail("the response head from " + peer_ + " exceeds 64 KiB");
      std::size_t got = receive(in_.data() + in_end_, in_.size() - in_end_, deadline);
      if (got == 0) {
        if (in_end_ == in_begin_) hung_up("closed");
        fail(peer_ + " closed the connection in the middle of the response head");
      }
      in_end_ += got;
    }
  }

  // Moves in_'s unread bytes to its front, making room to read more.
  void compact() {
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }

  head parse_head(std::string_view text) const {
    using http1::iequals, http1::decimal;
    auto eol = text.find("\r\n");
    auto line = text.substr(0, eol);
    // "HTTP/1.1 200 OK"; the reason phrase may be empty or missing.
    auto status = line.size() >= 12 ? decimal(line.substr(9, 3)) : std::nullopt;
    if (!status || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') ||
        line[8] != ' ' || (line.size() > 12 && line[12] != ' '))
      fail("malformed status line from " + peer_ + ": '" + http1::printable(line) + "'");
    head h;
    h.status = static_cast<int>(*status);
    bool http10 = line[7] == '0';
    bool close = false, keep_alive = false;
    for (text.remove_prefix(eol + 2); !text.empty(); text.remove_prefix(eol + 2)) {
      eol = text.find("\r\n");
      line = text.substr(0, eol);
      auto field = http1::field_line(line);
      if (!field)
        fail("malformed header line from " + peer_ + ": '" + http1::printable(line) +
             "'");
      auto [name, value] = *field;
      if (iequals(name, "Content-Length")) {
        auto length = decimal(value);
        if (!length)
          fail("bad Content-Length from " + peer_ + ": '" + http1::printable(value) +
               "' (not a number, or too large)");
        if (h.length && *h.length != *length)
          fail(peer_ + " sent two different Content-Length headers");
        h.length = length;
      } else if (iequals(name, "Transfer-Encoding")) {
        // Only chunked: this client asks for no other coding.
        if (!iequals(value, "chunked"))
          fail("unsupported Transfer-Encoding from " + peer_ + ": '" +
               http1::printable(value) + "'");
        h.chunked = true;
      } else if (iequals(name, "Connection")) {
        close = close || http1::lists(value, "close");
        keep_alive = keep_alive || http1::lists(value, "keep-alive");
      } else if (iequals(name, "Content-Type")) {
        h.content_type = value;
      } else if (iequals(name, bulk_field::bulk)) {
        h.bulk = value;
      } else if (iequals(name, bulk_field::segments)) {
        h.segments = value;
      } else if (iequals(name, bulk_field::returned)) {
        h.returned = value;
      }
    }
    h.keep_alive = !close && (!http10 || keep_alive);
    return h;
  }

  // Fills into[0, size): what in_ holds already, the rest straight from the
  // socket in as few recv calls as the kernel allows.
  void read_exact(char* into, std::size_t size, clock::time_point deadline) {
    std::size_t got = std::min(size, in_end_ - in_begin_);
    std::memcpy(into, in_.data() + in_begin_, got);
    in_begin_ += got;
    while (got < size) {
      std::size_t more = receive(into + got, size - got, deadline);
      if (more == 0)
        fail(peer_ + " closed the connection " + std::to_string(size - got) +
             " bytes before the end of the response");
      got += more;
    }
  }

  // One CRLF-terminated line of chunk framing, without the CRLF; valid
  // until the next read.
  std::string_view read_line(clock::time_point deadline) {
    for (;;) {
      std::string_view pending(in_.data() + in_begin_, in_end_ - in_begin_);
      auto eol = pending.find("\r\n");
      if (eol != std::string_view::npos) {
        in_begin_ += eol + 2;
        return pending.substr(0, eol);
      }
      compact();
      if (in_end_ == in_.size()) fail("a chunk line from " + peer_ + " exceeds 64 KiB");
      std::size_t got = receive(in_.data() + in_end_, in_.size() - in_end_, deadline);
      if (got == 0)
        fail(peer_ + " closed the connection in the middle of a chunked body");
      in_end_ += got;
    }
  }

  std::size_t chunk_size(std::string_view line) const {
    auto size = http1::chunk_size(line);
    if (!size)
      fail("bad chunk size line from " + peer_ + " (not hex, or it overflows): '" +
           http1::printable(line) + "'");
    return *size;
  }

  // Geometric growth for bodies of unknown length, so many small chunks do
  // not each resize the buffer.
  static void grow(std::string& buffer, std::size_t needed, std::size_t max_body) {
    if (buffer.size() >= needed) return;
    buffer.resize(std::max(
        needed, buffer.size() + std::min(buffer.size(), max_body - buffer.size())));
  }

  std::size_t read_chunked(std::string& body, std::size_t max_body,
                           clock::time_point deadline) {
    std::size_t size = 0;
    for (;;) {
      std::size_t chunk = chunk_size(read_line(deadline));
      if (chunk == 0) break;
      if (chunk > max_body - size)
        too_large("at least " + std::to_string(size + chunk) + " bytes, chunked",
                  max_body);
      grow(body, size + chunk, max_body);
      read_exact(body.data() + size, chunk, deadline);
      size += chunk;
      if (!read_line(deadline).empty())
        fail("a chunk from " + peer_ + " is longer than its declared size");
    }
    // Trailer fields carry nothing this client uses.
    for (std::size_t trailers = 0;;) {
      auto line = read_line(deadline);
      if (line.empty()) return size;
      if ((trailers += line.size() + 2) > head_limit)
        fail("the trailer section from " + peer_ + " exceeds 64 KiB");
    }
  }

  std::size_t read_to_close(std::string& body, std::size_t max_body,
                            clock::time_point deadline) {
    std::size_t size = in_end_ - in_begin_;
    if (size > max_body)
      too_large("over " + std::to_string(max_body) + " bytes", max_body);
    grow(body, size, max_body);
    read_exact(body.data(), size, deadline);
    for (;;) {
      if (size == max_body) {
        char probe;
        if (receive(&probe, 1, deadline) == 0) return size;
        too_large("over " + std::to_string(max_body) + " bytes", max_body);
      }
      grow(body, std::min(max_body, size + head_limit), max_body);
      std::size_t room = std::min(body.size(), max_body) - size;
      std::size_t got = receive(body.data() + size, room, deadline);
      if (got == 0) return size;
      size += got;
    }
  }

  const int fd_;
  const std::string peer_;                 // host:port, for messages
  const std::string host_line_;            // "Host: host:port\r\n"
  std::string out_;                        // the request head, and a small body after it
  std::vector<iovec> parts_;               // out_, then the pieces of a large body
  std::string in_;                         // response head and chunk framing
  std::size_t in_begin_ = 0, in_end_ = 0;  // in_'s bytes not consumed yet
  bool reusable_ = true;
  bool served_ = false;               // a whole response came before on this connection
  bool answered_ = false;             // a byte of the current response came
  std::unique_ptr<tls_session> tls_;  // null: plain HTTP
  spin_wait spin_;
  // On a unix socket: the descriptors that came, and its shared memory.
  received_descriptors descriptors_;
  std::unique_ptr<segment_exchange> shared_;
};

}  // namespace lp::detail
