#pragma once

#include <launchpad/wire.hpp>
#include <string>

namespace lp::detail {

// How a client reaches one node. The launch policy picks the implementation
// (HTTP today); clients and the reflection code never know which.
class channel {
 public:
  virtual ~channel() = default;
  // Sends the positional arguments and returns the method's result, or
  // throws lp::remote_error / lp::transport_error.
  virtual json call(const std::string& method, const json& args) = 0;
  virtual const std::string& node() const = 0;
};

}  // namespace lp::detail
