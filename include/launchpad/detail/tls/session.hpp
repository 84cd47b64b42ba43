#pragma once

// One TLS connection over a non-blocking socket, for either side: the
// handshake, with a deadline, then reads and writes that never wait. The
// caller polls the socket for what a step asks (want_read: POLLIN,
// want_write: POLLOUT), with its own deadlines, as it does for plain
// sockets: the node server's deadline_stream, the client's http_connection.
// Bytes go through send(MSG_NOSIGNAL) and recv, so that a peer that left
// raises no SIGPIPE.

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/tls/handles.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

class tls_session {
 public:
  using clock = std::chrono::steady_clock;
  enum class role { client, server };

  // Why a step failed. peer_refused: the peer's alert refused our
  // certificate (or our lack of one). peer_untrusted: the peer's
  // certificate is not the launch's, or it showed none. not_tls: the peer
  // speaks something else (plain HTTP). closed: the peer hung up.
  enum class trouble {
    none,
    timeout,
    closed,
    peer_refused,
    peer_untrusted,
    not_tls,
    other
  };

  // The outcome of one read or write: `bytes` moved, or the socket to wait
  // for, or the end.
  struct step {
    enum state_t { done, want_read, want_write, closed, failed } state = done;
    std::size_t bytes = 0;
  };

  // `socket` stays the caller's, and must be non-blocking.
  LP_API tls_session(const tls_context& context, int socket, role side);
  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;

  // Completes the handshake by `deadline`: trouble::none, or why not
  // (details in error()).
  LP_API trouble handshake(clock::time_point deadline);

  LP_API step read(char* into, std::size_t size);
  LP_API step write(const char* from, std::size_t size);

  // Whether bytes already read from the socket wait to be taken: the
  // socket's poll would not show them.
  bool buffered() const { return SSL_has_pending(ssl_.get()) == 1; }

  // Tells the peer this side closes (close_notify), if the socket takes it
  // at once; never waits.
  LP_API void close();

  // The last failure: what it was, and OpenSSL's words for it.
  trouble failure() const noexcept { return failure_; }
  const std::string& error() const noexcept { return error_; }

 private:
  step::state_t outcome(int result);

  ssl_handle ssl_;
  int socket_;
  trouble failure_ = trouble::none;
  std::string error_;
};

}  // namespace lp::detail
