#pragma once

// context.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/tls/context.hpp>

namespace lp::detail {

LP_API tls_context::tls_context(const tls_credentials& credentials,
                                const std::string& source)
    : context_(SSL_CTX_new(TLS_method())), credentials_(credentials) {
  auto fail = [&](const std::string& what) {
    auto why = openssl_errors();
    return tls_error("the TLS credentials of " + source + " cannot be used: " + what +
                     (why.empty() ? "" : " (" + why + ")"));
  };
  SSL_CTX* context = context_.get();
  if (!context) throw fail("no TLS context");
  if (!SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION) ||
      !SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION))
    throw fail("no TLS 1.3");
  // AES-128-GCM first, where OpenSSL puts AES-256-GCM: both ends are ours,
  // and with AES instructions it is TLS 1.3's cheapest suite, a quarter
  // faster than AES-256-GCM here (docs/security.md, "What it costs").
  if (!SSL_CTX_set_ciphersuites(context,
                                "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                "TLS_CHACHA20_POLY1305_SHA256"))
    // It fails only on a name this OpenSSL does not know; the OpenSSL
    // configuration's CipherSuites cannot make it fail.
    throw fail(std::string("this OpenSSL (") + OpenSSL_version(OPENSSL_VERSION) +
               ") does not know the TLS 1.3 suites TLS_AES_128_GCM_SHA256, "
               "TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256; "
               "build against OpenSSL 3.0 or later");
  // Writes may be partial, as send()'s are, and go on from a buffer that
  // moved (a non-blocking socket's retries).
  SSL_CTX_set_mode(context,
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A record whole, and what follows it, in one read.
  SSL_CTX_set_read_ahead(context, 1);
  // Connections are pooled and long-lived: no session tickets, no cache.
  SSL_CTX_set_num_tickets(context, 0);
  SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  static constexpr unsigned char session_context[] = "launchpad";
  SSL_CTX_set_session_id_context(context, session_context, sizeof session_context - 1);

  auto chain = certificates_in(credentials.certificate);
  if (chain.empty()) throw fail("no certificate in PEM form");
  if (SSL_CTX_use_certificate(context, chain.front().get()) != 1)
    throw fail("the certificate is refused");
  for (std::size_t i = 1; i < chain.size(); ++i)
    if (SSL_CTX_add1_chain_cert(context, chain[i].get()) != 1)
      throw fail("a certificate of its chain is refused");
  {
    auto in = reading_bio(credentials.key);
    key_handle key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
    if (!key) throw fail("no private key in PEM form");
    if (SSL_CTX_use_PrivateKey(context, key.get()) != 1 ||
        SSL_CTX_check_private_key(context) != 1)
      throw fail("the key is not the certificate's");
  }
  auto authorities = certificates_in(credentials.authority);
  if (authorities.empty()) throw fail("no authority to check peers against");
  store_handle store(X509_STORE_new());
  if (!store) throw fail("no trust store");
  for (auto& authority : authorities)
    if (X509_STORE_add_cert(store.get(), authority.get()) != 1)
      throw fail("the authority is refused");
  SSL_CTX_set_cert_store(context, store.release());  // the context owns it now
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_verify_depth(context, 8);
}

}  // namespace lp::detail
