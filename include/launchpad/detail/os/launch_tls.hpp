#pragma once

// Whether a launch's nodes speak TLS, and with which credentials
// (docs/protocol.md, "Encryption"): --lp_tls, the site's files, and where
// the nodes serve. The launcher decides, once; its nodes follow.

#include <iostream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// Whether other hosts may reach a server bound to `host`: anything but
// loopback.
inline bool beyond_loopback(std::string_view host) {
  return !(host.starts_with("127.") || host == "::1" || host == "[::1]" ||
           host == "localhost");
}

// The credentials of a launch, or none for plain HTTP: its own (a fresh key
// and certificate), or the site's files. `beyond` says whether its nodes
// serve beyond loopback. Warns, on std::cerr, of --lp_tls=off there. Throws
// tls_error for files that cannot be used.
LP_API tls_credentials launch_tls(const tls_settings& tls, const std::string& program,
                                  bool beyond);

}  // namespace lp::detail
