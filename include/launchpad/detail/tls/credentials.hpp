#pragma once

// A launch's TLS credentials, as PEM text: the certificate every peer of the
// launch presents, its key, and what peers are checked against. A launch
// makes its own (a fresh key and a self-signed certificate, which is then
// also the one authority peers trust), or reads a site's files
// (--lp_tls_cert, --lp_tls_key, --lp_tls_ca). Either way they reach node
// processes as the secret does (docs/protocol.md, "Encryption").

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/tls/handles.hpp>
#include <launchpad/error.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace lp::detail {

struct tls_credentials {
  std::string certificate;  // PEM: the certificate peers present, then its chain, if any
  std::string key;          // PEM: the certificate's private key
  std::string authority;    // PEM: the certificates a peer's must verify against
  bool empty() const noexcept { return certificate.empty(); }
};

// The files of a site's credentials, as the flags name them; `authority`
// may be empty (peers then trust the certificate itself).
struct tls_files {
  std::string authority, certificate, key;
};

// How long a launch's own certificate is valid. It starts an hour back, for
// hosts whose clocks differ a little.
inline constexpr long tls_validity_days = 365;

// A fresh P-256 key and a self-signed certificate for it, naming the
// program, with a random serial: the credentials of one launch.
LP_API tls_credentials make_launch_credentials(const std::string& program);

// The credentials in a site's files, checked: each file readable PEM, the
// certificate valid now and verified by the authority, the key its own.
// Throws lp::tls_error naming the file and the fix.
LP_API tls_credentials read_tls_files(const tls_files& files);

// Every certificate in `pem`, in order; none if it holds none. Throws
// nothing.
LP_API std::vector<certificate_handle> certificates_in(const std::string& pem);

}  // namespace lp::detail
