#pragma once

// Block-style YAML from values built in order, for the manifests of a
// Kubernetes launch: what kubectl and a reader take in, written without a
// YAML library. Every string is double-quoted with JSON's escapes, which
// are YAML's too: a value never reads as a number, a boolean or null (YAML
// 1.1 takes `on`, `no` and `0400` for other things), and a newline in it
// stays a newline.

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail::kube {

// A mapping, a sequence or a scalar. Keys keep the order they were added
// in: a manifest reads apiVersion, kind, metadata, spec, as people write
// them. Not nlohmann::ordered_json, which would compile a second JSON
// library (parser and serializer) into every file that launches, for
// manifests that are only ever written; a scalar is the wire's
// nlohmann::json, already there.
class yaml_value {
 public:
  using member = std::pair<std::string, yaml_value>;

  yaml_value() = default;  // null
  yaml_value(std::nullptr_t) {}
  yaml_value(bool value) : scalar_(value) {}
  yaml_value(int value) : scalar_(value) {}
  yaml_value(const char* text) : scalar_(text) {}
  yaml_value(std::string text) : scalar_(std::move(text)) {}
  // {{"key", value}, ...}: a mapping, in the order written.
  yaml_value(std::initializer_list<member> members)
      : shape_(shape::mapping), members_(members) {}

  static yaml_value object() { return yaml_value(std::initializer_list<member>{}); }
  static yaml_value array(std::initializer_list<yaml_value> elements = {}) {
    yaml_value out;
    out.shape_ = shape::sequence;
    out.elements_ = elements;
    return out;
  }

  bool is_object() const { return shape_ == shape::mapping; }
  bool is_array() const { return shape_ == shape::sequence; }
  bool empty() const { return members_.empty() && elements_.empty(); }

  // A mapping's value at `key`, added (null) at the end if it is not there;
  // a null becomes an empty mapping first.
  yaml_value& operator[](const std::string& key) {
    if (shape_ == shape::scalar && scalar_.is_null()) shape_ = shape::mapping;
    for (auto& [name, value] : members_)
      if (name == key) return value;
    return members_.emplace_back(key, yaml_value()).second;
  }
  // Null where there is no `key`.
  const yaml_value& operator[](const std::string& key) const {
    static const yaml_value none;
    const auto* found = find(key);
    return found ? *found : none;
  }
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  yaml_value& operator[](std::size_t i) { return elements_.at(i); }
  const yaml_value& operator[](std::size_t i) const { return elements_.at(i); }

  void push_back(yaml_value element) { elements_.push_back(std::move(element)); }
  // Sets each of `other`'s keys: in its place if this mapping has it, else
  // at the end.
  void update(const yaml_value& other) {
    for (const auto& [name, value] : other.members_) (*this)[name] = value;
  }

  const std::vector<member>& items() const { return members_; }
  const std::vector<yaml_value>& elements() const { return elements_; }
  const nlohmann::json& scalar() const { return scalar_; }

  friend bool operator==(const yaml_value& a, const yaml_value& b) {
    return a.shape_ == b.shape_ && a.scalar_ == b.scalar_ && a.members_ == b.members_ &&
           a.elements_ == b.elements_;
  }

 private:
  const yaml_value* find(const std::string& key) const {
    for (const auto& [name, value] : members_)
      if (name == key) return &value;
    return nullptr;
  }

  enum class shape { scalar, mapping, sequence };
  shape shape_ = shape::scalar;
  nlohmann::json scalar_;
  std::vector<member> members_;
  std::vector<yaml_value> elements_;
};

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
  return plain ? key
               : nlohmann::json(key).dump(-1, ' ', false,
                                          nlohmann::json::error_handler_t::replace);
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
  return value.scalar().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
    for (const auto& inner : value.elements()) {
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
