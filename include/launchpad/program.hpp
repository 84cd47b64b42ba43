#pragma once

#include <cstddef>
#include <functional>
#include <launchpad/detail/node.hpp>
#include <launchpad/detail/resolve.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/service.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace lp {

namespace detail {
// Everything a launch needs to know about one node, and how to build it.
// Building the graph only records these; no node object exists until a
// launch builds the nodes its process runs.
struct node_spec {
  std::string label;
  std::string group;  // empty for a node outside any group
  int index = -1;     // its place in the group
  std::string service;
  std::vector<std::string> edges;  // labels of the nodes it was given handles to
  bool has_run = false;
  std::function<std::unique_ptr<node_instance>(const connector&)> build;
};

inline void check_name(std::string_view name, std::string_view what) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
  };
  if (name.empty()) throw graph_error(std::string(what) + " must not be empty");
  for (char c : name)
    if (!allowed(c))
      throw graph_error(std::string(what) + " '" + std::string(name) +
                        "' may hold only letters, digits, '_', '-' and '.'");
}
}  // namespace detail

class node_group;

// The graph of a distributed program: its nodes, their services, and which
// node was given a handle to which. main() builds it the same way in every
// process of a launch, so building must be cheap and deterministic.
class program {
 public:
  explicit program(std::string name) : name_(std::move(name)) {
    detail::check_name(name_, "a program name");
  }
  // Handles point at their program, so it stays where it was made.
  program(const program&) = delete;
  program& operator=(const program&) = delete;

  // Adds a node serving T, built from args when the program launches. Every
  // lp::handle<S> among args (also inside a std::vector) becomes an
  // lp::client<S> first; T is then built as T(args...) or, for an aggregate,
  // T{args...}.
  template <class T, class... Args>
  handle<T> add_node(std::string label, Args&&... args) {
    detail::check_name(label, "a node label");
    return add<T>(std::move(label), "", -1, std::forward<Args>(args)...);
  }

  // A group of nodes labelled "<name>/0", "<name>/1", ...
  node_group group(std::string name);

  const std::string& name() const noexcept { return name_; }
  const std::vector<detail::node_spec>& nodes() const noexcept { return nodes_; }

  const detail::node_spec& node(std::string_view label) const {
    for (const auto& spec : nodes_)
      if (spec.label == label) return spec;
    throw graph_error("program '" + name_ + "' has no node '" + std::string(label) + "'");
  }

 private:
  friend class node_group;

  template <class T, class... Args>
  handle<T> add(std::string label, std::string group, int index, Args&&... args) {
    static_assert(service<T>,
                  "add_node<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
                  "right after T, in T's namespace or at global scope");
    static_assert(
        !service<T> || detail::buildable_from<T, detail::resolved_t<std::decay_t<Args>>...>,
        "add_node<T>(label, args...): T cannot be built from these arguments. Each "
        "lp::handle<S> becomes an lp::client<S> (a handle<A> cannot fill a client<B>); check "
        "the arguments' number, order and types against T's constructor or members");
    if constexpr (service<T> &&
                  detail::buildable_from<T, detail::resolved_t<std::decay_t<Args>>...>) {
      if (taken(label))
        throw graph_error("program '" + name_ + "' already has a node or group named '" +
                          label + "'; labels must be unique");
      detail::node_spec spec;
      spec.label = label;
      spec.group = std::move(group);
      spec.index = index;
      spec.service = std::string(service_definition<T>::name);
      spec.has_run = runnable<T>;
      auto check = [&](const std::string& target, const program* owner) {
        if (owner != this)
          throw graph_error("node '" + label + "' was given a handle to '" + target +
                            "' from another program; handles work only in the program "
                            "that made them");
        spec.edges.push_back(target);
      };
      (detail::for_each_handle(args, check), ...);
      spec.build = [stored = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)](
                       const detail::connector& connect) {
        return std::apply(
            [&](const auto&... arg) -> std::unique_ptr<detail::node_instance> {
              return std::make_unique<detail::typed_node<T>>(
                  detail::build<T>(detail::resolve(arg, connect)...));
            },
            stored);
      };
      nodes_.push_back(std::move(spec));
      return handle<T>(this, std::move(label));
    } else {
      throw graph_error("unreachable: rejected at compile time");
    }
  }

  bool taken(const std::string& label) const {
    for (const auto& spec : nodes_)
      if (spec.label == label || spec.group == label) return true;
    return groups_.count(label) != 0;
  }

  std::string name_;
  std::vector<detail::node_spec> nodes_;
  std::map<std::string, int> groups_;  // group name -> nodes added so far
};

// A named set of nodes of one program, labelled "<group>/<index>".
// Launch policies may apply per-group settings (resources, restarts).
class node_group {
 public:
  template <class T, class... Args>
  handle<T> add_node(Args&&... args) {
    int index = program_->groups_[name_]++;
    return program_->add<T>(name_ + "/" + std::to_string(index), name_, index,
                            std::forward<Args>(args)...);
  }
  const std::string& name() const noexcept { return name_; }

 private:
  friend class program;
  node_group(program* owner, std::string name) : program_(owner), name_(std::move(name)) {}
  program* program_;
  std::string name_;
};

inline node_group program::group(std::string name) {
  detail::check_name(name, "a group name");
  if (!groups_.count(name)) {
    for (const auto& spec : nodes_)
      if (spec.label == name)
        throw graph_error("program '" + name_ + "' already has a node named '" + name +
                          "'; a group cannot take its name");
    groups_[name] = 0;
  }
  return node_group(this, std::move(name));
}

}  // namespace lp
