#pragma once

// session.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/tls/session.hpp>

namespace lp::detail {

namespace tls_detail {

inline int socket_of(BIO* bio) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio)));
}

// A BIO over a socket that sends with MSG_NOSIGNAL. OpenSSL's own socket
// BIO uses write(), whose SIGPIPE would end the process when a peer has
// gone; the library sets no SIGPIPE handler of its own, which is the
// program's to choose.
inline BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* made =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "lp socket");
    BIO_meth_set_write(made, [](BIO* bio, const char* data, int size) -> int {
      BIO_clear_retry_flags(bio);
      for (;;) {
        ssize_t sent =
            ::send(socket_of(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
        if (sent >= 0) return static_cast<int>(sent);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
        return -1;
      }
    });
    BIO_meth_set_read(made, [](BIO* bio, char* data, int size) -> int {
      BIO_clear_retry_flags(bio);
      for (;;) {
        ssize_t got = ::recv(socket_of(bio), data, static_cast<std::size_t>(size), 0);
        if (got >= 0) return static_cast<int>(got);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
        return -1;
      }
    });
    BIO_meth_set_ctrl(made, [](BIO*, int command, long, void*) -> long {
      return command == BIO_CTRL_FLUSH ? 1 : 0;
    });
    BIO_meth_set_create(made, [](BIO* bio) -> int {
      BIO_set_init(bio, 1);
      return 1;
    });
    return made;
  }();
  return method;
}

// Whether OpenSSL's reason is the peer's alert about our certificate.
inline bool refusal_alert(int reason) {
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return true;
    default:
      return false;
  }
}

}  // namespace tls_detail

LP_API tls_session::tls_session(const tls_context& context, int socket, role side)
    : ssl_(SSL_new(context.native())), socket_(socket) {
  BIO* bio = BIO_new(tls_detail::socket_method());
  if (!ssl_ || !bio) {
    BIO_free(bio);
    throw tls_error("cannot start a TLS connection: " + openssl_errors());
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(socket)));
  SSL_set_bio(ssl_.get(), bio, bio);  // the session owns it now
  if (side == role::server)
    SSL_set_accept_state(ssl_.get());
  else
    SSL_set_connect_state(ssl_.get());
}

LP_API tls_session::step::state_t tls_session::outcome(int result) {
  int code = SSL_get_error(ssl_.get(), result);
  if (code == SSL_ERROR_WANT_READ) return step::want_read;
  if (code == SSL_ERROR_WANT_WRITE) return step::want_write;
  if (code == SSL_ERROR_ZERO_RETURN) {
    failure_ = trouble::closed;
    error_ = "the peer closed the connection";
    return step::closed;
  }
  if (code == SSL_ERROR_SYSCALL) {
    int error = errno;
    ERR_clear_error();
    failure_ = trouble::closed;
    error_ = error == 0 ? "the peer closed the connection" : std::strerror(error);
    return error == 0 || error == ECONNRESET || error == EPIPE ? step::closed
                                                               : step::failed;
  }
  unsigned long first = ERR_peek_error();
  int reason = ERR_GET_REASON(first);
  long verified = SSL_get_verify_result(ssl_.get());
  error_ = openssl_errors();
  if (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    failure_ = trouble::closed;
    error_ = "the peer closed the connection";
    return step::closed;
  }
  if (tls_detail::refusal_alert(reason)) {
    failure_ = trouble::peer_refused;
  } else if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED ||
             reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
    failure_ = trouble::peer_untrusted;
    if (verified != X509_V_OK) error_ = X509_verify_cert_error_string(verified);
  } else if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
             reason == SSL_R_PACKET_LENGTH_TOO_LONG || reason == SSL_R_UNKNOWN_PROTOCOL ||
             reason == SSL_R_RECORD_LENGTH_MISMATCH) {
    failure_ = trouble::not_tls;
  } else {
    failure_ = trouble::other;
  }
  if (error_.empty()) error_ = "TLS error " + std::to_string(code);
  return step::failed;
}

LP_API tls_session::trouble tls_session::handshake(clock::time_point deadline) {
  for (;;) {
    ERR_clear_error();
    int result = SSL_do_handshake(ssl_.get());
    if (result == 1) return trouble::none;
    auto state = outcome(result);
    if (state != step::want_read && state != step::want_write) return failure_;
    for (;;) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) {
        failure_ = trouble::timeout;
        error_ = "the TLS handshake did not finish in time";
        return failure_;
      }
      pollfd watched{socket_,
                     static_cast<short>(state == step::want_read ? POLLIN : POLLOUT), 0};
      int ready =
          ::poll(&watched, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) {
        failure_ = trouble::other;
        error_ = std::strerror(errno);
        return failure_;
      }
    }
  }
}

// SSL_get_error needs the thread's error queue empty before each read or
// write. It nearly always is (outcome() drains it), and clearing an empty
// queue measured ~840 instructions, which a small call over TLS would pay
// four times (benchmarks/README.md, "Waiting without sleeping").
inline void empty_error_queue() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

LP_API tls_session::step tls_session::read(char* into, std::size_t size) {
  empty_error_queue();
  std::size_t got = 0;
  int result = SSL_read_ex(ssl_.get(), into, size, &got);
  if (result == 1) return {step::done, got};
  return {outcome(result), 0};
}

LP_API tls_session::step tls_session::write(const char* from, std::size_t size) {
  empty_error_queue();
  std::size_t sent = 0;
  int result = SSL_write_ex(ssl_.get(), from, size, &sent);
  if (result == 1) return {step::done, sent};
  return {outcome(result), 0};
}

LP_API void tls_session::close() {
  if (failure_ != trouble::none || !SSL_is_init_finished(ssl_.get())) return;
  ERR_clear_error();
  SSL_shutdown(ssl_.get());
  ERR_clear_error();
}

}  // namespace lp::detail
