#pragma once

// credentials.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/tls/credentials.hpp>

#include <ctime>

namespace lp::detail {

namespace tls_detail {

inline std::string pem_of(const X509* certificate) {
  bio_handle out(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(out.get(), const_cast<X509*>(certificate));
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

inline std::string pem_of(const EVP_PKEY* key) {
  bio_handle out(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

inline void add_extension(X509* certificate, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (!extension || !X509_add_ext(certificate, extension, -1)) {
    X509_EXTENSION_free(extension);
    throw tls_error("cannot make the launch's certificate: " + openssl_errors());
  }
  X509_EXTENSION_free(extension);
}

// "2026-01-31 09:00 UTC"
inline std::string time_text(const ASN1_TIME* time) {
  tm parts{};
  if (!ASN1_TIME_to_tm(time, &parts)) return "an unreadable time";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &parts);
  return text;
}

inline std::string read_whole(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw tls_error("cannot read the " + flag + " file " + path + ": " +
                    std::strerror(errno) + "; give a readable file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tls_detail

LP_API std::vector<certificate_handle> certificates_in(const std::string& pem) {
  std::vector<certificate_handle> found;
  auto in = reading_bio(pem);
  while (X509* certificate = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr))
    found.emplace_back(certificate);
  ERR_clear_error();  // the end of the text reads as an error
  return found;
}

LP_API tls_credentials make_launch_credentials(const std::string& program) {
  auto fail = [](const char* step) {
    return tls_error(std::string("cannot make the launch's TLS credentials (") + step +
                     "): " + openssl_errors());
  };
  key_handle key(EVP_EC_gen("P-256"));
  if (!key) throw fail("an EC P-256 key");
  certificate_handle certificate(X509_new());
  if (!certificate || !X509_set_version(certificate.get(), 2))
    throw fail("a certificate");
  {
    std::unique_ptr<BIGNUM, openssl_free<BIGNUM, BN_free>> serial(BN_new());
    if (!serial || !BN_rand(serial.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
        !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate.get())))
      throw fail("a random serial");
  }
  if (!X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -60L * 60) ||
      !X509_gmtime_adj(X509_getm_notAfter(certificate.get()),
                       tls_validity_days * 24 * 3600))
    throw fail("the validity");
  if (!X509_set_pubkey(certificate.get(), key.get())) throw fail("the public key");
  // A common name holds at most 64 characters.
  std::string common = ("launchpad " + program).substr(0, 64);
  X509_NAME* name = X509_get_subject_name(certificate.get());
  if (!X509_NAME_add_entry_by_txt(
          name, "O", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>("Launchpad launch"), -1, -1, 0) ||
      !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                  reinterpret_cast<const unsigned char*>(common.c_str()),
                                  -1, -1, 0) ||
      !X509_set_issuer_name(certificate.get(), name))
    throw fail("the name");
  // Its own authority, for servers and clients alike. Peers check it, not
  // names; the names are for curl, which checks them (docs/protocol.md).
  tls_detail::add_extension(certificate.get(), NID_basic_constraints, "critical,CA:TRUE");
  tls_detail::add_extension(certificate.get(), NID_key_usage,
                            "critical,digitalSignature,keyCertSign");
  tls_detail::add_extension(certificate.get(), NID_ext_key_usage,
                            "serverAuth,clientAuth");
  tls_detail::add_extension(certificate.get(), NID_subject_key_identifier, "hash");
  tls_detail::add_extension(certificate.get(), NID_subject_alt_name,
                            "DNS:launchpad,DNS:localhost,IP:127.0.0.1,IP:::1");
  if (!X509_sign(certificate.get(), key.get(), EVP_sha256())) throw fail("the signature");
  auto pem = tls_detail::pem_of(certificate.get());
  return {pem, tls_detail::pem_of(key.get()), pem};
}

LP_API tls_credentials read_tls_files(const tls_files& files) {
  using tls_detail::read_whole;
  tls_credentials read;
  read.certificate = read_whole(files.certificate, "--lp_tls_cert");
  read.key = read_whole(files.key, "--lp_tls_key");
  auto chain = certificates_in(read.certificate);
  if (chain.empty())
    throw tls_error("the --lp_tls_cert file " + files.certificate +
                    " holds no certificate in PEM form (-----BEGIN CERTIFICATE-----); "
                    "convert it, e.g. openssl x509 -in " +
                    files.certificate + " -inform DER -out cert.pem");
  X509* leaf = chain.front().get();
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0)
    throw tls_error(
        "the certificate in the --lp_tls_cert file " + files.certificate +
        " expired on " + tls_detail::time_text(X509_get0_notAfter(leaf)) +
        "; give a current one, or leave out --lp_tls_cert and --lp_tls_key and "
        "the launch makes its own");
  if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0)
    throw tls_error("the certificate in the --lp_tls_cert file " + files.certificate +
                    " is not valid before " +
                    tls_detail::time_text(X509_get0_notBefore(leaf)) +
                    "; is this host's clock right? Give a certificate valid now");
  {
    auto in = reading_bio(read.key);
    key_handle key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
    ERR_clear_error();
    if (!key)
      throw tls_error("the --lp_tls_key file " + files.key +
                      " holds no private key in PEM form, or an encrypted one; give it "
                      "unencrypted, e.g. openssl pkey -in " +
                      files.key + " -out key.pem");
    if (X509_check_private_key(leaf, key.get()) != 1) {
      ERR_clear_error();
      throw tls_error("the key in the --lp_tls_key file " + files.key +
                      " is not the key of the certificate in the --lp_tls_cert file " +
                      files.certificate + "; give the two files of one pair");
    }
  }
  if (files.authority.empty()) {
    // Peers trust exactly this certificate.
    read.authority = tls_detail::pem_of(leaf);
    return read;
  }
  read.authority = read_whole(files.authority, "--lp_tls_ca");
  auto authorities = certificates_in(read.authority);
  if (authorities.empty())
    throw tls_error("the --lp_tls_ca file " + files.authority +
                    " holds no certificate in PEM form (-----BEGIN CERTIFICATE-----); "
                    "give the CA's certificate as PEM");
  store_handle store(X509_STORE_new());
  for (auto& authority : authorities) X509_STORE_add_cert(store.get(), authority.get());
  struct stack_free {
    void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
  };
  std::unique_ptr<STACK_OF(X509), stack_free> middle(sk_X509_new_null());
  for (std::size_t i = 1; i < chain.size(); ++i)
    sk_X509_push(middle.get(), chain[i].get());
  std::unique_ptr<X509_STORE_CTX, openssl_free<X509_STORE_CTX, X509_STORE_CTX_free>>
      check(X509_STORE_CTX_new());
  if (!check || !X509_STORE_CTX_init(check.get(), store.get(), leaf, middle.get()))
    throw tls_error("cannot check the --lp_tls_cert file: " + openssl_errors());
  if (X509_verify_cert(check.get()) != 1) {
    ERR_clear_error();
    throw tls_error("the certificate in the --lp_tls_cert file " + files.certificate +
                    " does not verify against the --lp_tls_ca file " + files.authority +
                    " (" +
                    X509_verify_cert_error_string(X509_STORE_CTX_get_error(check.get())) +
                    "); give the CA that signed it, or a current one");
  }
  return read;
}

}  // namespace lp::detail
