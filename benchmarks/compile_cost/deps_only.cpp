// The baseline: only the libraries Launchpad stands on, nothing of ours: what
// a user's file on the single header includes of them (Hana, nlohmann's
// codec, OpenSSL for the compiled part's TLS). Not <httplib.h>: the library
// speaks HTTP/1.1 itself.
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <boost/hana.hpp>
#include <nlohmann/json.hpp>

int main() {}
