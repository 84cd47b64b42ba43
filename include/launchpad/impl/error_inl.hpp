#pragma once

// error.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/error.hpp>

namespace lp {

LP_API error::error(const std::string& id, const std::string& message)
    : std::runtime_error("[lp." + id + "] " + message), id_(id) {}

}  // namespace lp
