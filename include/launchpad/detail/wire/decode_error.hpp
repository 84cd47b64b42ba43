#pragma once

// How a reader quotes a value that does not fit the type it must become
// (lp::decode_error, <launchpad/error.hpp>).

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

// A value as an error message quotes it: its type and the start of its text.
LP_API std::string describe_value(const json& value);

}  // namespace lp::detail
