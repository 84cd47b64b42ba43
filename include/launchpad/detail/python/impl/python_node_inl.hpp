#pragma once

// python_node.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/python/python_node.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string python_node::spec_message(const node_info& spec,
                                             const python_recipe& recipe) {
  json arg_schemas = json::array();
  std::string args;
  cbor::head(args, 4, recipe.arguments.size());
  for (const auto& argument : recipe.arguments) {
    if (argument.schema) {
      arg_schemas.push_back(schema_json(*argument.schema));
      args += argument.cbor;
    } else if (argument.handle_list) {
      arg_schemas.push_back({{"kind", "handles"}});
      cbor::write(args, argument.handles);
    } else {
      arg_schemas.push_back({{"kind", "handle"}});
      cbor::write(args, argument.handles.front());
    }
  }
  json described = describe_service(spec.service, *recipe.methods);
  json written = {{"node", spec.label},
                  {"program", settings_.program},
                  {"service", spec.service},
                  {"module", recipe.where.module},
                  {"class", recipe.where.name},
                  {"declared", described["methods"]},
                  {"arg_schemas", arg_schemas},
                  {"host", settings_.bind_host},
                  {"has_run", spec.has_run},
                  {"termination_notice_s", settings_.termination_notice.count()},
                  {"max_body_bytes", settings_.max_body_bytes}};
  if (recipe.state) written["state_schema"] = schema_json(*recipe.state);
  if (!settings_.secret.empty()) written["secret"] = settings_.secret;
  if (!settings_.tls.empty())
    written["tls"] = {{"certificate", settings_.tls.certificate},
                      {"key", settings_.tls.key},
                      {"authority", settings_.tls.authority}};
  if (settings_.health_timeout.count() > 0)
    written["health_timeout_ms"] = settings_.health_timeout.count();
  if (!settings_.checkpoint_save.empty())
    written["checkpoint"] = {{"save", settings_.checkpoint_save},
                             {"restore", settings_.checkpoint_restore.empty()
                                             ? json(nullptr)
                                             : json(settings_.checkpoint_restore)},
                             {"interval_ms", settings_.checkpoint_interval.count()}};
  auto text = written.dump();
  return "spec " + std::to_string(text.size()) + " " + std::to_string(args.size()) +
         "\n" + text + args;
}

}  // namespace lp::detail
