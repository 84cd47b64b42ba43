#pragma once

// schema.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/schema.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

namespace schema_writer {

// A spelling as people write it: std::string, and no "> >".
inline std::string spelled(std::string_view spelling) {
  auto text = readable_type(spelling);
  for (auto at = text.find(" >"); at != std::string::npos; at = text.find(" >", at))
    text.erase(at, 1);
  return text;
}

inline nlohmann::json write(const type_schema& schema,
                            std::vector<const type_schema*>& structs) {
  nlohmann::json out = {{"kind", schema.kind}, {"type", spelled(schema.spelling)}};
  auto kind = schema.kind;
  namespace kinds = protocol::kind;
  if (kind == kinds::integer || kind == kinds::floating || kind == kinds::enumeration)
    out["bits"] = schema.bits;
  if (kind == kinds::integer || kind == kinds::enumeration)
    out["signed"] = schema.is_signed;
  if (schema.element) out["element"] = write(*schema.element, structs);
  if (schema.fixed_size) out["size"] = schema.size;
  if (schema.unique) out["unique"] = true;
  if (schema.key) out["key"] = write(*schema.key, structs);
  if (schema.value) out["value"] = write(*schema.value, structs);
  if (kind == kinds::tuple) {
    out["items"] = nlohmann::json::array();
    for (const auto* item : schema.items) out["items"].push_back(write(*item, structs));
  }
  if (kind == kinds::record) {
    for (std::size_t i = structs.size(); i-- > 0;)
      if (structs[i] == &schema) {
        out["recursive"] = structs.size() - i;
        return out;
      }
    structs.push_back(&schema);
    out["fields"] = nlohmann::json::array();
    for (const auto& field : schema.fields)
      out["fields"].push_back(
          {{"name", field.name}, {"schema", write(*field.schema, structs)}});
    structs.pop_back();
  }
  return out;
}

}  // namespace schema_writer

LP_API nlohmann::json schema_json(const type_schema& schema) {
  std::vector<const type_schema*> structs;
  return schema_writer::write(schema, structs);
}

}  // namespace lp::detail
