#pragma once

#include <string>

namespace lp::detail {

// Where a node serves, as nodes publish it and callers dial it.
struct address {
  std::string host;
  int port = 0;
  std::string url() const { return "http://" + host + ":" + std::to_string(port); }
  bool operator==(const address&) const = default;
};

}  // namespace lp::detail
