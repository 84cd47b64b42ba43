#pragma once

// Block-style YAML from JSON values, for the manifests of a Kubernetes
// launch: what kubectl and a reader take in, written without a YAML
// library. Every string is double-quoted with JSON's escapes, which are
// YAML's too: a value never reads as a number, a boolean or null (YAML 1.1
// takes `on`, `no` and `0400` for other things), and a newline in it stays
// a newline.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::kube {

// Keys keep the order they were added in: a manifest reads apiVersion,
// kind, metadata, spec, as people write them.
using yaml_value = nlohmann::ordered_json;

namespace yaml_detail {

// A key as it stands: plain when it plainly is a string (apiVersion,
// app.kubernetes.io/name, tls.crt), else quoted.
inline std::string key_text(const std::string& key) {
  bool plain = !key.empty() && ((key[0] >= 'a' && key[0] <= 'z') ||
                                (key[0] >= 'A' && key[0] <= 'Z') || key[0] == '_');
  for (char c : key)
    plain =
        plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-');
  std::string lower;
  for (char c : key) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (std::string_view word :
       {"y", "yes", "n", "no", "true", "false", "on", "off", "null"})
    plain = plain && lower != word;
  return plain
             ? key
             : yaml_value(key).dump(-1, ' ', false, yaml_value::error_handler_t::replace);
}

// A value that fits on its key's line: a scalar, or an empty container.
inline bool is_block(const yaml_value& value) {
  return (value.is_object() || value.is_array()) && !value.empty();
}

inline std::string scalar(const yaml_value& value) {
  if (value.is_object()) return "{}";
  if (value.is_array()) return "[]";
  // Invalid UTF-8 (from a user's flag) turns into U+FFFD rather than
  // failing the launch.
  return value.dump(-1, ' ', false, yaml_value::error_handler_t::replace);
}

// Writes a non-empty container, each line at `indent`; the first at the
// cursor instead when `continues` (after a sequence's "- ").
inline void write_block(std::string& out, const yaml_value& value, std::size_t indent,
                        bool continues) {
  bool first = true;
  auto start = [&] {
    if (!(first && continues)) out.append(indent, ' ');
    first = false;
  };
  auto rest = [&](const yaml_value& inner, bool after_dash) {
    if (!is_block(inner)) {
      out += " " + scalar(inner) + "\n";
    } else if (after_dash) {
      out += " ";
      write_block(out, inner, indent + 2, true);
    } else {
      out += "\n";
      write_block(out, inner, indent + 2, false);
    }
  };
  if (value.is_object()) {
    for (const auto& [key, inner] : value.items()) {
      start();
      out += key_text(key) + ":";
      rest(inner, false);
    }
  } else {
    for (const auto& inner : value) {
      start();
      out += "-";
      rest(inner, true);
    }
  }
}

}  // namespace yaml_detail

// One YAML document, ending in a newline.
inline std::string to_yaml(const yaml_value& value) {
  if (!yaml_detail::is_block(value)) return yaml_detail::scalar(value) + "\n";
  std::string out;
  yaml_detail::write_block(out, value, 0, false);
  return out;
}

// Documents one after another, as `kubectl apply -f` reads them.
inline std::string to_yaml(const std::vector<yaml_value>& documents) {
  std::string out;
  for (const auto& document : documents) {
    if (!out.empty()) out += "---\n";
    out += to_yaml(document);
  }
  return out;
}

}  // namespace lp::detail::kube
