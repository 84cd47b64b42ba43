#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/detail/graph/handle_arguments.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/service.hpp>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace lp {

// What each process of a group needs from a cluster: one node's process, or
// a colocated group's one process. Only the Slurm launch uses it, e.g.
// p.group("learner").resources({.cpus = 4, .memory_mb = 8000, .gpus = 1}).
struct resources {
  int cpus = 1;
  long memory_mb = 0;  // 0: the partition's default
  int gpus = 0;
};

// What the program graph knows of one node; a launch builds the node itself
// only in the process that runs it.
struct node_info {
  std::string label;
  std::string group;  // empty for a node outside any group
  int index = -1;     // its place in the group
  std::string service;
  std::vector<std::string> edges;  // labels of the nodes it was given handles to
  bool has_run = false;
};

// What a group asks of the launch policies that run processes.
struct group_settings {
  int max_restarts = 0;                            // restarts of a failed node
  std::chrono::milliseconds restart_backoff{200};  // doubles with each restart
  bool colocated = false;                          // all its nodes in one process
  lp::resources resources;                         // per process, for cluster launches
};

class program;

namespace detail {
// Builds a node's object, and the clients of its handles through `connect`.
using node_builder = std::function<std::unique_ptr<node_instance>(const connector&)>;

// How a launch builds the nodes of a graph, which users never do.
struct graph_access {
  static std::unique_ptr<node_instance> build(const program& graph, std::size_t node,
                                              const connector& connect);
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
  // The nodes, in the order they were added.
  const std::vector<node_info>& nodes() const noexcept { return nodes_; }

  // A group's settings; a node outside any group (group "") has the defaults.
  group_settings settings_of(const std::string& group) const {
    auto found = groups_.find(group);
    return found == groups_.end() ? group_settings{} : found->second.settings;
  }

  // The handle of an existing node, for code that did not keep the one
  // add_node returned. Throws lp::graph_error if there is no such node or it
  // serves another service.
  template <class T>
  handle<T> find(std::string_view label) const {
    static_assert(service<T>, "program::find<T>: T is not a service");
    const auto& spec = node(label);
    if (spec.service != service_definition<T>::name)
      throw graph_error("node '" + spec.label + "' serves " + spec.service + ", not " +
                        std::string(service_definition<T>::name));
    return handle<T>(this, spec.label);
  }

  const node_info& node(std::string_view label) const {
    for (const auto& spec : nodes_)
      if (spec.label == label) return spec;
    throw graph_error("program '" + name_ + "' has no node '" + std::string(label) + "'");
  }

 private:
  friend class node_group;
  friend struct detail::graph_access;

  template <class T, class... Args>
  handle<T> add(std::string label, std::string group, int index, Args&&... args) {
    static_assert(service<T>,
                  "add_node<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
                  "right after T, in T's namespace or at global scope");
    static_assert(
        !service<T> || detail::buildable_or_explained<T, detail::resolved_t<std::decay_t<Args>>...>(),
        "add_node<T>(label, args...): T cannot be built from these arguments. Each "
        "lp::handle<S> becomes an lp::client<S> (a handle<A> cannot fill a client<B>); check "
        "the arguments' number, order and types against T's constructor or members");
    if constexpr (service<T> &&
                  detail::buildable_from<T, detail::resolved_t<std::decay_t<Args>>...>) {
      if (taken(label))
        throw graph_error("program '" + name_ + "' already has a node or group named '" +
                          label + "'; labels must be unique");
      node_info spec;
      spec.label = label;
      spec.group = std::move(group);
      spec.index = index;
      spec.service = std::string(service_definition<T>::name);
      spec.has_run = runnable<T>;
      auto check = [&](const std::string& target, const program* owner) {
        if (!owner)
          throw graph_error("node '" + label + "' was given an empty lp::handle (default-"
                            "constructed, naming no node); give it the handle add_node returned");
        if (owner != this)
          throw graph_error("node '" + label + "' was given a handle to '" + target +
                            "' from another program; handles work only in the program "
                            "that made them");
        spec.edges.push_back(target);
      };
      (detail::for_each_handle(args, check), ...);
      builders_.push_back([stored = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)](
                       const detail::connector& connect) {
        return std::apply(
            [&](const auto&... arg) -> std::unique_ptr<detail::node_instance> {
              return std::make_unique<detail::typed_node<T>>(
                  detail::build<T>(detail::resolve(arg, connect)...));
            },
            stored);
      });
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

  struct group_state {
    int size = 0;
    group_settings settings;
  };

  std::string name_;
  std::vector<node_info> nodes_;
  std::vector<detail::node_builder> builders_;  // by node
  std::map<std::string, group_state> groups_;
};

// A named set of nodes of one program, labelled "<group>/<index>".
// Launch policies may apply per-group settings (resources, restarts).
class node_group {
 public:
  template <class T, class... Args>
  handle<T> add_node(Args&&... args) {
    int index = program_->groups_[name_].size++;
    return program_->add<T>(name_ + "/" + std::to_string(index), name_, index,
                            std::forward<Args>(args)...);
  }
  const std::string& name() const noexcept { return name_; }

  // When a node of this group fails (exits non-zero or is killed), start it
  // again, at most max_restarts times, waiting `backoff` and twice as long
  // each time after. Callers reach the new process through the launch's
  // rendezvous; a call that failed meanwhile is theirs to retry. Applies to
  // launches that run processes; in the multi-threading ones a failure stops
  // the program.
  node_group& restart_on_failure(int max_restarts,
                                 std::chrono::milliseconds backoff = std::chrono::milliseconds(200)) {
    auto& settings = program_->groups_[name_].settings;
    settings.max_restarts = max_restarts;
    settings.restart_backoff = backoff;
    return *this;
  }

  // Runs every node of this group as threads of one process, instead of a
  // process each: less isolation, fewer processes.
  node_group& colocate() {
    program_->groups_[name_].settings.colocated = true;
    return *this;
  }

  // What each process of this group asks of a cluster (see docs/slurm.md);
  // a colocated group asks it once, for its one process.
  node_group& resources(lp::resources needs) {
    if (needs.cpus < 1 || needs.memory_mb < 0 || needs.gpus < 0)
      throw graph_error("group '" + name_ + "': resources need at least 1 CPU, and no negative "
                        "memory or GPUs");
    program_->groups_[name_].settings.resources = needs;
    return *this;
  }

 private:
  friend class program;
  node_group(program* owner, std::string name) : program_(owner), name_(std::move(name)) {}
  program* program_;
  std::string name_;
};

namespace detail {
inline std::unique_ptr<node_instance> graph_access::build(const program& graph, std::size_t node,
                                                          const connector& connect) {
  return graph.builders_.at(node)(connect);
}

// The labels of the nodes with a run() among `names` (labels or group names).
inline std::set<std::string> runnable_labels(const program& graph,
                                             const std::vector<std::string>& names) {
  std::set<std::string> labels;
  for (const auto& name : names) {
    bool known = false;
    for (const auto& spec : graph.nodes()) {
      if (spec.label != name && spec.group != name) continue;
      known = true;
      if (spec.has_run) labels.insert(spec.label);
    }
    if (!known)
      throw graph_error("program '" + graph.name() + "' has no node or group '" + name + "'");
  }
  return labels;
}
}  // namespace detail

inline node_group program::group(std::string name) {
  detail::check_name(name, "a group name");
  if (!groups_.count(name)) {
    for (const auto& spec : nodes_)
      if (spec.label == name)
        throw graph_error("program '" + name_ + "' already has a node named '" + name +
                          "'; a group cannot take its name");
    groups_[name] = {};
  }
  return node_group(this, std::move(name));
}

}  // namespace lp
