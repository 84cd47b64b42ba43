#pragma once

// What every TLS connection of a process shares, server and client alike:
// TLS 1.3 only, the launch's certificate and key presented, and a trust
// store that holds the launch's authority alone. Peers are checked against
// it and nothing else: not the system's CAs, not host names (a node's
// address changes with every launch and restart). Both sides present the
// certificate: a server refuses a peer without it during the handshake,
// before any HTTP.

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/detail/tls/handles.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

class tls_context {
 public:
  // Throws lp::tls_error if the credentials cannot be used; `source` says
  // where they came from, for its message.
  LP_API explicit tls_context(const tls_credentials& credentials,
                              const std::string& source = "the launch");
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  SSL_CTX* native() const noexcept { return context_.get(); }
  // What it was made from, for a process of the launch that speaks TLS
  // itself (a Python node's).
  const tls_credentials& credentials() const noexcept { return credentials_; }

 private:
  ssl_context_handle context_;
  tls_credentials credentials_;
};

}  // namespace lp::detail
