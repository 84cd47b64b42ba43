#pragma once

// python_node.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/python/python_node.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API std::string python_node::spec_message(const node_info& spec,
                                             const python_recipe& recipe) {
  namespace key = protocol::python_spec;
  json arg_schemas = json::array();
  std::string args;
  if (!recipe.methods) {
    // A Launchpad program's node: its definition is the whole of its
    // arguments, one CBOR byte string.
    cbor::head(args, 2, recipe.definition.size());
    args += recipe.definition;
  } else {
    cbor::head(args, 4, recipe.arguments.size());
  }
  for (const auto& argument : recipe.arguments) {
    if (argument.schema) {
      arg_schemas.push_back(schema_json(*argument.schema));
      args += argument.cbor;
    } else if (argument.handle_list) {
      arg_schemas.push_back({{"kind", protocol::kind::handles}});
      cbor::write(args, argument.handles);
    } else {
      arg_schemas.push_back({{"kind", protocol::kind::handle}});
      cbor::write(args, argument.handles.front());
    }
  }
  json described = recipe.methods
                       ? describe_service(spec.service, *recipe.methods)["methods"]
                       : json();
  json written = {{key::node, spec.label},
                  {key::program, settings_.program},
                  {key::service, spec.service},
                  {key::module_name, recipe.where.module},
                  {key::class_name, recipe.where.name},
                  {key::declared, described},
                  {key::arg_schemas, arg_schemas},
                  {key::host, settings_.bind_host},
                  {key::has_run, spec.has_run},
                  {key::termination_notice_s, settings_.termination_notice.count()},
                  {key::max_body_bytes, settings_.max_body_bytes},
                  {key::shared_memory_bytes, settings_.shared_memory_bytes}};
  if (!recipe.methods) written[key::launchpad] = true;
  if (recipe.state) written[key::state_schema] = schema_json(*recipe.state);
  if (!settings_.secret.empty()) written[key::secret] = settings_.secret;
  if (!settings_.socket_path.empty()) written[key::socket] = settings_.socket_path;
  if (!settings_.tls.empty())
    written[key::tls] = {{key::tls_certificate, settings_.tls.certificate},
                         {key::tls_key, settings_.tls.key},
                         {key::tls_authority, settings_.tls.authority}};
  if (settings_.health_timeout.count() > 0)
    written[key::health_timeout_ms] = settings_.health_timeout.count();
  if (!settings_.checkpoint_save.empty())
    written[key::checkpoint] = {
        {key::checkpoint_save, settings_.checkpoint_save},
        {key::checkpoint_restore, settings_.checkpoint_restore.empty()
                                      ? json(nullptr)
                                      : json(settings_.checkpoint_restore)},
        {key::checkpoint_interval_ms, settings_.checkpoint_interval.count()}};
  auto text = written.dump();
  return protocol::python_control::spec + std::to_string(text.size()) + " " +
         std::to_string(args.size()) + "\n" + text + args;
}

}  // namespace lp::detail
