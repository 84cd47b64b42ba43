#pragma once

// launch_tls.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/os/launch_tls.hpp>

namespace lp::detail {

LP_API tls_credentials launch_tls(const tls_settings& tls, const std::string& program,
                                  bool beyond) {
  // The launch has checked that the flags go together (cli's reader).
  bool files = !tls.cert.empty();
  if (tls.mode == tls_mode::off) {
    if (beyond)
      std::cerr << "[lp] --lp_tls=off: the nodes serve beyond loopback without TLS; the "
                   "launch's secret and every call's arguments cross the network in "
                   "cleartext"
                << std::endl;
    return {};
  }
  if (tls.mode != tls_mode::on && !beyond && !files) return {};
  if (files) return read_tls_files({tls.ca, tls.cert, tls.key});
  return make_launch_credentials(program);
}

}  // namespace lp::detail
