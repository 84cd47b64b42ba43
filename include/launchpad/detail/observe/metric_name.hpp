#pragma once

#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

// What a user's metric may be called: Prometheus's rule for names, minus the
// colon (kept for recording rules) and the prefixes the library keeps for
// itself (lp_) and Prometheus reserves (__). Throws usage_error naming the
// rule that `name` breaks.
inline void check_metric_name(std::string_view function, std::string_view name) {
  auto fail = [&](std::string_view rule) {
    throw usage_error(std::string(function) + "(\"" + std::string(name.substr(0, 80)) +
                      "\"): " + std::string(rule));
  };
  if (name.empty()) fail("a metric name cannot be empty");
  if (name.size() > 100) fail("a metric name has at most 100 characters");
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!letter(name.front()))
    fail(
        "a metric name starts with a letter or _ (Prometheus's rule: "
        "[a-zA-Z_][a-zA-Z0-9_]*)");
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9'))
      fail(
          "a metric name holds only letters, digits and _ (Prometheus's rule: "
          "[a-zA-Z_][a-zA-Z0-9_]*)");
  if (name.starts_with("lp_") || name.starts_with("__"))
    fail("names that start with lp_ or __ are kept for the library and Prometheus");
}

}  // namespace lp::detail
