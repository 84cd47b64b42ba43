#pragma once

// cbor_encode.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/cbor_encode.hpp>

namespace lp::detail::cbor {

LP_API std::span<const std::string_view> gathered::pieces() {
  pieces_.clear();
  std::size_t at = 0;
  for (const auto& b : borrowed_) {
    pieces_.push_back(std::string_view(bytes_).substr(at, b.at - at));
    pieces_.push_back(b.data);
    at = b.at;
  }
  pieces_.push_back(std::string_view(bytes_).substr(at));
  return pieces_;
}

}  // namespace lp::detail::cbor
