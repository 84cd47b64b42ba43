#pragma once

#include <sys/random.h>

#include <cstddef>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// 128 random bits from the kernel's CSPRNG, as 32 hex digits: the bearer
// token every call of a launch must carry.
inline std::string make_secret() {
  unsigned char bytes[16];
  std::size_t filled = 0;
  while (filled < sizeof bytes) {
    auto got = ::getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (got < 0) throw secret_error("getrandom() failed; cannot make the launch's secret");
    filled += static_cast<std::size_t>(got);
  }
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

}  // namespace lp::detail
