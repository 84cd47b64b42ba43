#pragma once

// launch_tls.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/os/launch_tls.hpp>

namespace lp::detail {

LP_API tls_credentials launch_tls(const tls_flags& flags, const std::string& program,
                                  bool beyond) {
  // The launch has checked that the flags go together (check_tls_flags).
  bool files = !flags.cert.empty();
  if (flags.mode == tls_mode::off) {
    if (beyond)
      std::cerr << "[lp] --lp_tls=off: the nodes serve beyond loopback without TLS; the "
                   "launch's secret and every call's arguments cross the network in "
                   "cleartext"
                << std::endl;
    return {};
  }
  if (flags.mode != tls_mode::on && !beyond && !files) return {};
  if (files) return read_tls_files({flags.ca, flags.cert, flags.key});
  return make_launch_credentials(program);
}

}  // namespace lp::detail
