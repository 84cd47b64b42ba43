#pragma once

/// @file
/// lp::program, the graph of a distributed program, and lp::node_group, a
/// numbered set of its nodes with settings for the launch.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/graph/executable_recipe.hpp>
#include <launchpad/detail/graph/handle_arguments.hpp>
#include <launchpad/detail/graph/python_recipe.hpp>
#include <launchpad/detail/serve/typed_node.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/service.hpp>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace lp {

/// What each process of a group needs: one node's process, or a colocated
/// group's one process.
///
/// ```cpp
/// p.group("learner").resources({.cpus = 4, .memory_mb = 8000, .gpus = 1});
/// ```
///
/// Slurm and Kubernetes allocate all three (docs/slurm.md,
/// docs/kubernetes.md); local_mp hands out distinct GPUs
/// (CUDA_VISIBLE_DEVICES) and pins the process to `cpus` cores
/// (docs/launching.md, "Environment, GPUs and cores per group").
struct resources {
  int cpus = 1;        ///< cores, at least 1
  long memory_mb = 0;  ///< memory in MB; 0: none asked (Slurm's partition's default)
  int gpus = 0;        ///< GPUs
};

/// What the program graph knows of one node, as lp::program::nodes() lists
/// them; a launch builds the node itself only in the process that runs it.
struct node_info {
  std::string label;    ///< "counter", or "actors/3" in a group
  std::string group;    ///< the group's name; empty for a node outside any group
  int index = -1;       ///< its place in the group; -1 outside any group
  std::string service;  ///< the service's name, as LP_SERVICE wrote it
  std::vector<std::string> edges;      ///< labels of the nodes it was given handles to
  bool has_run = false;                ///< the service has a run() (lp::runnable)
  bool checkpointed = false;           ///< lp::checkpointed: lp_save and lp_restore
  std::optional<python_class> python;  ///< a Python service's class (LP_PYTHON)
};

/// What a group asks of the launch policies that run processes, as the
/// lp::node_group calls set it and lp::program::settings_of gives it.
struct group_settings {
  int max_restarts = 0;  ///< restarts of a failed node (restart_on_failure)
  std::chrono::milliseconds restart_backoff{200};  ///< doubles with each restart
  bool colocated = false;   ///< all its nodes in one process (colocate)
  lp::resources resources;  ///< per process, for cluster launches
  /// Saves of checkpointed nodes (lp::checkpointed) while they run
  /// (checkpoint_every); zero: only when they stop.
  std::chrono::milliseconds checkpoint_interval{0};
  /// A node whose calls wait longer than this for the one before them (a
  /// handler that never returns), or whose run() makes no sign of progress
  /// that long (lp::heartbeat()), is taken for hung (health_timeout); zero:
  /// never.
  std::chrono::milliseconds health_timeout{0};
  bool pin_cores = false;  ///< resources() was given: local launches pin to its cpus
  std::map<std::string, std::string> env;  ///< added to each process's environment
};

class program;

namespace detail {
// Builds a node's object, and the clients of its handles through `connect`.
using node_builder = std::function<std::unique_ptr<node_instance>(const connector&)>;

// How a launch builds the nodes of a graph, which users never do.
struct graph_access {
  static std::unique_ptr<node_instance> build(const program& graph, std::size_t node,
                                              const connector& connect);
  // What starts a node of a Python service; null for a C++ node.
  static const python_recipe* python(const program& graph, std::size_t node);
  // What starts a node that is another C++ program's node; null otherwise.
  static const executable_recipe* executable(const program& graph, std::size_t node);
  // Throws lp::graph_error naming a node reserved and never defined.
  static void check_defined(const program& graph);
  // Adds a node that has no C++ type, from a description (a Launchpad
  // program's: python/launchpad/); `spec.label` is "<group>/<index>", the
  // group's next, and `spec.edges` name nodes added before it. Throws
  // lp::graph_error for a bad or taken label or an edge to no node.
  static void add_described(program& graph, node_info spec,
                            std::shared_ptr<const python_recipe> recipe);
  // The same for a node of another C++ program (executable_recipe).
  static void add_described(program& graph, node_info spec,
                            std::shared_ptr<const executable_recipe> recipe);
  // A file that every process of a launch must read where no file of the
  // launching host is (a described program's description, in a Kubernetes
  // pod): the Kubernetes launch carries it in its Secret, whose mount is
  // each pod's run directory. Named as a file of that directory.
  static void carry_file(program& graph, std::string name, std::string bytes);
  static const std::map<std::string, std::string>& carried_files(const program& graph);
};

// Throws lp::graph_error unless `name` is a non-empty run of letters,
// digits, '_', '-' and '.'; `what` names it in the message.
LP_API void check_name(std::string_view name, std::string_view what);

// The graph is built in main() before lp::launch, which cannot catch what
// building throws: a graph_error that main() lets escape ends the program
// as a launch that could not start does ("[lp] the program could not
// start: ...", exit status 1), not in std::terminate's abort. Any other
// exception goes to the terminate handler that was there before.
LP_API void end_graph_errors_cleanly();
}  // namespace detail

class node_group;

/// The graph of a distributed program: its nodes, their services, and which
/// node was given a handle to which.
///
/// ```cpp
/// int main(int argc, char** argv) {
///   lp::program p("counter");
///   auto counter = p.add_node<Counter>("counter");
///   auto producers = p.group("producers");
///   for (int i = 0; i < 4; ++i) producers.add_node<Producer>(counter, 1000);
///   return lp::launch(p, argc, argv);
/// }
/// ```
///
/// Building it constructs no node: add_node records the service, the label
/// and the arguments, and a launch builds each node in the process that runs
/// it. main() builds the graph the same way in every process of a launch,
/// so building must be cheap and deterministic (docs/concepts.md,
/// "Program").
class program {
 public:
  /// An empty program.
  /// @param name letters, digits, '_', '-' and '.'; it names the launch's run
  /// directory, its Slurm job and its Kubernetes objects
  /// @throws lp::graph_error for an empty or malformed name
  explicit program(std::string name) : name_(std::move(name)) {
    detail::end_graph_errors_cleanly();
    detail::check_name(name_, "a program name");
  }
  /// Not copyable: handles point at their program, so it stays where it was
  /// made.
  program(const program&) = delete;
  /// Not assignable: handles point at their program.
  program& operator=(const program&) = delete;

  /// Adds a node serving T, built from `args` when the program launches.
  ///
  /// Every `lp::handle<S>` among `args` (also inside a std::vector) becomes
  /// an `lp::client<S>` first; T is then built as `T(args...)` or, for an
  /// aggregate, `T{args...}`. Arguments that cannot build T stop the build
  /// with a message that says why. For a Python service (LP_PYTHON), `args`
  /// go to the class's `__init__`.
  ///
  /// ```cpp
  /// auto learner = p.add_node<Learner>("learner", 0.01);  // Learner(0.01)
  /// p.add_node<Actor>("actor", learner);                  // Actor{lp::client<Learner>}
  /// ```
  ///
  /// @tparam T a service (LP_SERVICE)
  /// @param label unique in the program: letters, digits, '_', '-' and '.'
  /// @param args copied into the graph; each process builds its nodes from them
  /// @return the node's handle, to give to other nodes
  /// @throws lp::graph_error for a bad or taken label, or a handle that is
  /// empty or of another program
  template <class T, class... Args>
  handle<T> add_node(std::string label, Args&&... args) {
    detail::check_name(label, "a node label");
    return add<T>(std::move(label), "", -1, std::forward<Args>(args)...);
  }

  /// Reserves a node serving T, to be built from define(handle, args...)
  /// later.
  ///
  /// Its handle can go to nodes added before it is defined, so that two
  /// nodes can hold clients of each other (docs/launching.md, "Nodes that
  /// call each other"). A launch refuses a program with a node reserved and
  /// never defined.
  ///
  /// ```cpp
  /// auto evaluator = p.reserve<Evaluator>("evaluator");
  /// auto learner = p.add_node<Learner>("learner", evaluator);
  /// p.define(evaluator, learner, 100);
  /// ```
  ///
  /// @param label as add_node takes it
  /// @throws lp::graph_error for a bad or taken label
  template <class T>
  handle<T> reserve(std::string label) {
    detail::check_name(label, "a node label");
    return reserve_node<T>(std::move(label), "", -1);
  }

  /// Gives a reserved node the arguments it is built from, as add_node does.
  /// @param reserved the handle reserve returned
  /// @param args as add_node takes them
  /// @throws lp::graph_error for a handle of another program, a node defined
  /// already, or a handle among `args` that add_node would refuse
  template <class T, class... Args>
  void define(const handle<T>& reserved, Args&&... args) {
    static_assert(service<T>, "define(handle, args...): the handle's T is not a service");
    if (reserved.owner() != this)
      throw graph_error("program::define: the handle to '" + reserved.label() +
                        "' was not reserved in program '" + name_ + "'");
    std::size_t at = 0;
    while (nodes_[at].label != reserved.label()) ++at;  // a handle of ours names a node
    if (builders_[at] || pythons_[at])
      throw graph_error("node '" + reserved.label() +
                        "' is defined already; define each "
                        "reserved node once");
    auto spec = nodes_[at];
    auto made = made_from<T>(spec, std::forward<Args>(args)...);
    nodes_[at] = std::move(spec);
    builders_[at] = std::move(made.builder);
    pythons_[at] = std::move(made.python);
  }

  /// A group of nodes labelled "<name>/0", "<name>/1", ...; calling it again
  /// with the same name continues the numbering.
  ///
  /// ```cpp
  /// auto actors = p.group("actors").restart_on_failure(3);
  /// for (int i = 0; i < 4; ++i) actors.add_node<Actor>(learner);  // actors/0 .. actors/3
  /// ```
  ///
  /// @param name as a label; no node may have it
  /// @throws lp::graph_error for a bad name, or the label of a node
  node_group group(std::string name);

  /// The name the program was made with.
  const std::string& name() const noexcept { return name_; }
  /// The nodes, in the order they were added.
  const std::vector<node_info>& nodes() const noexcept { return nodes_; }

  /// A group's settings; a node outside any group (group "") has the
  /// defaults.
  group_settings settings_of(const std::string& group) const {
    auto found = groups_.find(group);
    return found == groups_.end() ? group_settings{} : found->second.settings;
  }

  /// The handle of an existing node, for code that did not keep the one
  /// add_node returned.
  /// @throws lp::graph_error if there is no such node or it serves another
  /// service than T
  template <class T>
  handle<T> find(std::string_view label) const {
    static_assert(service<T>, "program::find<T>: T is not a service");
    const auto& spec = node(label);
    if (spec.service != service_definition<T>::name)
      throw graph_error("node '" + spec.label + "' serves " + spec.service + ", not " +
                        std::string(service_definition<T>::name));
    return handle<T>(this, spec.label);
  }

  /// What the graph knows of the node of this label.
  /// @throws lp::graph_error if there is no such node
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
    static_assert(
        service<T>,
        "add_node<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
        "right after T, in T's namespace or at global scope");
    if constexpr (service<T>) {
      check_free(label);
      auto spec = declared<T>(label, std::move(group), index);
      auto made = made_from<T>(spec, std::forward<Args>(args)...);
      append(std::move(spec), std::move(made));
    }
    return handle<T>(this, std::move(label));
  }

  template <class T>
  handle<T> reserve_node(std::string label, std::string group, int index) {
    static_assert(
        service<T>,
        "reserve<T>: T is not a service; declare it with LP_SERVICE(T, methods...) "
        "right after T, in T's namespace or at global scope");
    check_free(label);
    append(declared<T>(label, std::move(group), index), {});  // defined later
    return handle<T>(this, std::move(label));
  }

  template <class T>
  static node_info declared(std::string label, std::string group, int index) {
    auto spec = described(std::move(label), std::move(group), index,
                          service_definition<T>::name, runnable<T>, lp::checkpointed<T>);
    if constexpr (python_service<T>) spec.python = python_class_of<T>;
    return spec;
  }

  // How a node is made: a C++ node built from its arguments, or a Python
  // node started with them.
  struct recipe {
    detail::node_builder builder;
    std::shared_ptr<const detail::python_recipe> python;
    std::shared_ptr<const detail::executable_recipe> executable;
  };

  template <class T, class... Args>
  recipe made_from(node_info& spec, Args&&... args) {
    if constexpr (python_service<T>)
      return {{}, python_wire<T>(spec, args...), {}};
    else
      return {wire<T>(spec, std::forward<Args>(args)...), {}, {}};
  }

  // What does not depend on the service's type is compiled once, not per
  // service in each of the user's files.
  LP_API static node_info described(std::string label, std::string group, int index,
                                    std::string_view service, bool has_run,
                                    bool checkpointed);
  // Throws lp::graph_error if a node or group has `label` already.
  LP_API void check_free(const std::string& label) const;
  LP_API void append(node_info spec, recipe made);
  // Checks a handle given to the node `spec` (of this program, naming a
  // node) and records its target as an edge.
  LP_API void connect(node_info& spec, const std::string& target,
                      const program* owner) const;

  // Checks the handles among args and records them as spec's edges; returns
  // what builds the node from args.
  template <class T, class... Args>
  detail::node_builder wire(node_info& spec, Args&&... args) {
    static_assert(
        detail::buildable_or_explained<
            T, detail::resolved_t<detail::kept_argument_t<Args>>...>(),
        "add_node<T>(label, args...): T cannot be built from these arguments. Each "
        "lp::handle<S> becomes an lp::client<S> (a handle<A> cannot fill a client<B>); "
        "check "
        "the arguments' number, order and types against T's constructor or members");
    if constexpr (detail::buildable_from<
                      T, detail::resolved_t<detail::kept_argument_t<Args>>...>) {
      auto check = [&](const std::string& target, const program* owner) {
        connect(spec, target, owner);
      };
      (detail::for_each_handle(args, check), ...);
      return
          [stored = std::make_tuple(detail::kept_argument(std::forward<Args>(args))...)](
              const detail::connector& connect) {
            return std::apply(
                [&](const auto&... arg) -> std::unique_ptr<detail::node_instance> {
                  return std::make_unique<detail::typed_node<T>>(
                      detail::build<T>(detail::resolve(arg, connect)...));
                },
                stored);
          };
    } else {
      throw graph_error("unreachable: rejected at compile time");
    }
  }

  // A Python node's arguments go to its class's __init__ in their wire
  // form; its handles become typed Python clients there.
  template <class T, class... Args>
  std::shared_ptr<const detail::python_recipe> python_wire(node_info& spec,
                                                           const Args&... args) {
    static_assert(
        detail::python_arguments<detail::kept_argument_t<Args>...>,
        "add_node<T>(label, args...) for a Python service (LP_PYTHON): each argument "
        "goes to the class's __init__, so it must have a wire form, as a method's "
        "parameter must, or be an lp::handle (or a std::vector of them)");
    auto made = std::make_shared<detail::python_recipe>();
    if constexpr (detail::python_arguments<detail::kept_argument_t<Args>...>) {
      auto check = [&](const std::string& target, const program* owner) {
        connect(spec, target, owner);
      };
      (detail::for_each_handle(args, check), ...);
      made->where = python_class_of<T>;
      made->methods = &detail::service_methods<T>();
      made->state = detail::declared_state<T>();
      (made->arguments.push_back(detail::python_argument_of(detail::kept_argument(args))),
       ...);
    }
    return made;
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
  std::vector<detail::node_builder> builders_;  // by node; empty for a Python node
  std::vector<std::shared_ptr<const detail::python_recipe>> pythons_;          // by node
  std::vector<std::shared_ptr<const detail::executable_recipe>> executables_;  // by node
  std::map<std::string, group_state> groups_;
  std::map<std::string, std::string> carried_;  // graph_access::carry_file's
};

/// A named set of nodes of one program, labelled "<group>/<index>", as
/// lp::program::group makes it.
///
/// Its settings apply to the launches that run processes (local_mp, test_mp,
/// Slurm, Kubernetes) and chain:
///
/// ```cpp
/// p.group("actors").restart_on_failure(3).colocate();
/// ```
///
/// docs/concepts.md, "Groups", and docs/launching.md say how each launch
/// applies them.
class node_group {
 public:
  /// Adds the group's next node, serving T, as lp::program::add_node does
  /// but with no label: the nodes are numbered "<group>/0", "<group>/1", ...
  template <class T, class... Args>
  handle<T> add_node(Args&&... args) {
    int index = program_->groups_[name_].size++;
    return program_->add<T>(name_ + "/" + std::to_string(index), name_, index,
                            std::forward<Args>(args)...);
  }
  /// Reserves the group's next node, for lp::program::define (see
  /// lp::program::reserve).
  template <class T>
  handle<T> reserve() {
    int index = program_->groups_[name_].size++;
    return program_->reserve_node<T>(name_ + "/" + std::to_string(index), name_, index);
  }
  /// The group's name.
  const std::string& name() const noexcept { return name_; }

  /// When a node of this group fails (exits non-zero or is killed), starts
  /// it again, at most `max_restarts` times, waiting `backoff` and twice as
  /// long each time after.
  ///
  /// Callers reach the new process through the launch's rendezvous; a call
  /// that failed meanwhile is theirs to retry. Applies to launches that run
  /// processes; in the multi-threading ones a failure stops the program
  /// (docs/launching.md, "Restarts").
  /// @return this group, to chain settings
  node_group& restart_on_failure(int max_restarts, std::chrono::milliseconds backoff =
                                                       std::chrono::milliseconds(200)) {
    auto& settings = program_->groups_[name_].settings;
    settings.max_restarts = max_restarts;
    settings.restart_backoff = backoff;
    return *this;
  }

  /// Runs every node of this group as threads of one process, instead of a
  /// process each: less isolation, fewer processes (docs/launching.md,
  /// "Colocation").
  /// @return this group, to chain settings
  node_group& colocate() {
    program_->groups_[name_].settings.colocated = true;
    return *this;
  }

  /// Saves the state of this group's checkpointed nodes (lp::checkpointed)
  /// this often, besides when they stop; a restarted node restores the last
  /// save before it serves (docs/launching.md, "Checkpoints").
  /// @return this group, to chain settings
  /// @throws lp::graph_error unless `interval` is positive
  node_group& checkpoint_every(std::chrono::milliseconds interval) {
    if (interval.count() <= 0)
      throw graph_error("group '" + name_ +
                        "': checkpoint_every needs a positive interval");
    program_->groups_[name_].settings.checkpoint_interval = interval;
    return *this;
  }

  /// Takes a node of this group for hung when a call has waited `timeout`
  /// for the node's handlers, or when its run() has made no sign of
  /// progress for `timeout`.
  ///
  /// A handler that is stuck, or a node that called itself, holds its calls;
  /// a run() makes signs with calls, lp::stop_requested(), metrics and
  /// lp::heartbeat(), and counts as alive while it waits in a call or in
  /// lp::wait_for_stop(). A hung node's process ends, and counts as failed
  /// (restart_on_failure applies). Set it above the longest a handler, or a
  /// step of run() between two signs, may rightly take. Applies to launches
  /// that run processes (docs/launching.md, "Hung nodes").
  /// @return this group, to chain settings
  /// @throws lp::graph_error unless `timeout` is positive
  node_group& health_timeout(std::chrono::milliseconds timeout) {
    if (timeout.count() <= 0)
      throw graph_error("group '" + name_ +
                        "': health_timeout needs a positive duration");
    program_->groups_[name_].settings.health_timeout = timeout;
    return *this;
  }

  /// What each process of this group asks of a cluster, and of local_mp's
  /// cores and GPUs (see lp::resources); a colocated group asks it once, for
  /// its one process.
  /// @return this group, to chain settings
  /// @throws lp::graph_error for fewer than 1 CPU, or negative memory or GPUs
  node_group& resources(lp::resources needs) {
    if (needs.cpus < 1 || needs.memory_mb < 0 || needs.gpus < 0)
      throw graph_error("group '" + name_ +
                        "': resources need at least 1 CPU, and no negative "
                        "memory or GPUs");
    program_->groups_[name_].settings.resources = needs;
    program_->groups_[name_].settings.pin_cores = true;
    return *this;
  }

  /// Environment variables for each process of this group, beside those of
  /// the launch (under Slurm, those of the job).
  ///
  /// ```cpp
  /// p.group("learner").env({{"XLA_FLAGS", "--xla_gpu_autotune_level=0"}});
  /// ```
  ///
  /// Applies to launches that run processes; threads share their one
  /// process's environment.
  /// @return this group, to chain settings
  /// @throws lp::graph_error for an empty name, one with '=', or one that
  /// starts with LP_ (the launch's own)
  node_group& env(std::map<std::string, std::string> variables) {
    for (const auto& [name, value] : variables)
      if (name.empty() || name.find('=') != std::string::npos || name.starts_with("LP_"))
        throw graph_error(
            "group '" + name_ + "': '" + name +
            "' cannot be an environment "
            "variable's name here (empty, with '=', or LP_..., which the launch "
            "sets itself)");
    for (auto& [name, value] : variables)
      program_->groups_[name_].settings.env[name] = value;
    return *this;
  }

 private:
  friend class program;
  node_group(program* owner, std::string name)
      : program_(owner), name_(std::move(name)) {}
  program* program_;
  std::string name_;
};

namespace detail {
inline std::unique_ptr<node_instance> graph_access::build(const program& graph,
                                                          std::size_t node,
                                                          const connector& connect) {
  return graph.builders_.at(node)(connect);
}

inline const python_recipe* graph_access::python(const program& graph, std::size_t node) {
  return graph.pythons_.at(node).get();
}

inline const executable_recipe* graph_access::executable(const program& graph,
                                                         std::size_t node) {
  return graph.executables_.at(node).get();
}

inline void graph_access::add_described(program& graph, node_info spec,
                                        std::shared_ptr<const python_recipe> recipe) {
  check_name(spec.group, "a group name");
  auto& group = graph.groups_[spec.group];
  spec.index = group.size;
  spec.label = spec.group + "/" + std::to_string(group.size);
  graph.check_free(spec.label);
  for (const auto& target : spec.edges) graph.node(target);  // throws for no such node
  ++group.size;
  graph.append(std::move(spec), {{}, std::move(recipe), {}});
}

inline void graph_access::add_described(program& graph, node_info spec,
                                        std::shared_ptr<const executable_recipe> recipe) {
  check_name(spec.group, "a group name");
  auto& group = graph.groups_[spec.group];
  spec.index = group.size;
  spec.label = spec.group + "/" + std::to_string(group.size);
  graph.check_free(spec.label);
  // It runs in a process of its own program, whose graph has none of this
  // program's nodes: it cannot be given their handles.
  if (!spec.edges.empty())
    throw graph_error("node '" + spec.label + "' runs node '" + recipe->node + "' of " +
                      recipe->path +
                      ", which cannot be given handles of this program's "
                      "nodes");
  ++group.size;
  graph.append(std::move(spec), {{}, {}, std::move(recipe)});
}

inline void graph_access::carry_file(program& graph, std::string name,
                                     std::string bytes) {
  graph.carried_[std::move(name)] = std::move(bytes);
}

inline const std::map<std::string, std::string>& graph_access::carried_files(
    const program& graph) {
  return graph.carried_;
}

inline void graph_access::check_defined(const program& graph) {
  for (std::size_t i = 0; i < graph.nodes_.size(); ++i)
    if (!graph.builders_[i] && !graph.pythons_[i] && !graph.executables_[i])
      throw graph_error(
          "node '" + graph.nodes_[i].label + "' of program '" + graph.name_ +
          "' was reserved and never defined; call define(handle, args...) with "
          "the handle reserve returned");
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
      throw graph_error("program '" + graph.name() + "' has no node or group '" + name +
                        "'");
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
