#pragma once

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// `size` bytes from the kernel's CSPRNG: for a launch's secret and its name.
inline void random_bytes(unsigned char* out, std::size_t size) {
  std::size_t filled = 0;
  while (filled < size) {
    auto got = ::getrandom(out + filled, size - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw secret_error(std::string("getrandom() failed (") + std::strerror(errno) +
                         "); the launch cannot make its secret or name");
    filled += static_cast<std::size_t>(got);
  }
}

// 128 random bits, as 32 hex digits: the bearer token every call of a
// launch must carry.
inline std::string make_secret() {
  unsigned char bytes[16];
  random_bytes(bytes, sizeof bytes);
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex += digits[byte >> 4];
    hex += digits[byte & 15];
  }
  return hex;
}

// Compares in time independent of where the strings differ.
inline bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

// What is wrong with a request's Authorization header, in words for its
// sender; empty if it carries the launch's secret. HTTP's scheme names are
// case-insensitive ("bearer" is "Bearer"), and one or more spaces may follow.
inline std::string credential_problem(std::string_view header, std::string_view secret) {
  if (header.empty())
    return "this node needs 'Authorization: Bearer <secret>'; the secret is in the "
           "launch's run "
           "directory (docs/protocol.md)";
  auto space = header.find(' ');
  auto scheme = header.substr(0, space);
  constexpr std::string_view bearer = "bearer";
  bool is_bearer = scheme.size() == bearer.size();
  for (std::size_t i = 0; is_bearer && i < bearer.size(); ++i)
    is_bearer = (scheme[i] | 0x20) == bearer[i];
  if (!is_bearer)
    return "the Authorization header's scheme is not Bearer; send 'Authorization: Bearer "
           "<secret>'";
  auto token =
      space == std::string_view::npos ? std::string_view() : header.substr(space);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  if (token.empty()) return "the Authorization header has no bearer token after 'Bearer'";
  if (!same_secret(token, secret)) return "the bearer token is not this launch's secret";
  return {};
}

}  // namespace lp::detail
