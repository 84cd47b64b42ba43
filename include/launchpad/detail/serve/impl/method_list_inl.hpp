#pragma once

// method_list.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/serve/method_list.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string signature_text(std::string_view name, const std::string_view* types,
                                  std::size_t count) {
  std::string text = readable_type(types[0]) + " " + std::string(name) + "(";
  for (std::size_t i = 1; i < count; ++i)
    text += (i > 1 ? ", " : "") + readable_type(types[i]);
  return text + ")";
}

LP_API void add_method(std::vector<method_info>& methods, std::string_view name,
                       std::size_t arity, const std::string_view* types,
                       std::size_t count, std::optional<batch_limits> batching,
                       std::span<const type_schema* const> schemas) {
  methods.push_back({name, arity, signature_text(name, types, count), batching, schemas});
}

LP_API json describe_service(std::string_view service,
                             const std::vector<method_info>& methods) {
  json listed = json::array();
  for (const auto& entry : methods) {
    json method = {
        {"name", entry.name}, {"arity", entry.arity}, {"signature", entry.signature}};
    if (!entry.schemas.empty()) {
      method["result"] = schema_json(*entry.schemas[0]);
      method["params"] = json::array();
      for (const auto* param : entry.schemas.subspan(1))
        method["params"].push_back(schema_json(*param));
    }
    if (entry.batching)
      method["batched"] = {{"max_batch", entry.batching->max_batch},
                           {"max_wait_us", entry.batching->max_wait.count()}};
    listed.push_back(std::move(method));
  }
  return {{"service", service}, {"methods", listed}};
}

}  // namespace lp::detail
