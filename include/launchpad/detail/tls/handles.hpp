#pragma once

// OpenSSL's objects, each owned by a unique_ptr that frees it the way
// OpenSSL wants, and OpenSSL's error queue in words. Every other file of
// tls/ holds its objects through these.

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace lp::detail {

template <class T, void (*Free)(T*)>
struct openssl_free {
  void operator()(T* object) const { Free(object); }
};

using ssl_context_handle = std::unique_ptr<SSL_CTX, openssl_free<SSL_CTX, SSL_CTX_free>>;
using ssl_handle = std::unique_ptr<SSL, openssl_free<SSL, SSL_free>>;
using key_handle = std::unique_ptr<EVP_PKEY, openssl_free<EVP_PKEY, EVP_PKEY_free>>;
using certificate_handle = std::unique_ptr<X509, openssl_free<X509, X509_free>>;
using bio_handle = std::unique_ptr<BIO, openssl_free<BIO, BIO_free_all>>;
using store_handle =
    std::unique_ptr<X509_STORE, openssl_free<X509_STORE, X509_STORE_free>>;

// What OpenSSL's error queue of this thread holds, oldest first, in one
// line; the queue is emptied. Empty if it held nothing.
inline std::string openssl_errors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof line);
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text;
}

// A memory BIO that reads `text` (which must outlive it).
inline bio_handle reading_bio(const std::string& text) {
  return bio_handle(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

}  // namespace lp::detail
