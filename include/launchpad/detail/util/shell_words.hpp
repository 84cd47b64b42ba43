#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace lp::detail {

// One word for sh, whatever it holds: what a user copies from a message, or
// a batch script runs.
inline std::string shell_quote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("-_./=:,@%+").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace lp::detail
