#pragma once

// typed_node.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/serve/typed_node.hpp>

namespace lp::detail {

LP_API std::size_t find_method(const std::vector<method_info>& methods,
                               std::string_view method, std::string_view service) {
  for (std::size_t i = 0; i < methods.size(); ++i)
    if (methods[i].name == method) return i;
  std::string known;
  for (const auto& entry : methods)
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  throw call_failure(404, protocol::error::no_such_method,
                     "service " + std::string(service) + " has no method '" +
                         std::string(method) +
                         "'; its methods: " + (known.empty() ? "(none)" : known));
}

LP_API void bad_argument(std::size_t i, std::string_view method, const decode_error& e) {
  throw call_failure(400, protocol::error::bad_request,
                     "argument " + std::to_string(i + 1) + " of " + std::string(method) +
                         ": " + e.reason());
}

LP_API void bad_arity(const arguments& args, std::size_t arity, std::string_view method) {
  throw call_failure(400, protocol::error::bad_request,
                     std::string(method) + " takes " + std::to_string(arity) +
                         " argument(s), got " + std::to_string(args.size()));
}

}  // namespace lp::detail
