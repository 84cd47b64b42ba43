#pragma once

// utf8.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/utf8.hpp>

namespace lp::detail {

LP_API std::string to_utf8(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    auto length = utf8_sequence(text.substr(at));
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace lp::detail
