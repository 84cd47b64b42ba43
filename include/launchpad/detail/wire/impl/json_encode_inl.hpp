#pragma once

// json_encode.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/json_encode.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API json json_of_written(std::string_view bytes) {
  return cbor::reader(bytes, cbor::unbounded, /*check_text=*/false).read_all();
}

}  // namespace lp::detail
