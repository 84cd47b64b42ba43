#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/call/node_addresses.hpp>
#include <launchpad/detail/checkpoint/checkpoint_schedule.hpp>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/host/direct_channel.hpp>
#include <launchpad/detail/host/executable_node.hpp>
#include <launchpad/detail/host/watchdog.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/python/python_node.hpp>
#include <launchpad/detail/serve/http_server.hpp>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/malloc_tuning.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// How a launch policy wants its nodes hosted; the launch's settings fill
// most of it.
struct host_options {
  policy_kind policy = policy_kind::test_mt;
  std::vector<std::string> labels;  // the nodes to run here; empty: all of them
  std::shared_ptr<directory> nodes = std::make_shared<local_directory>();
  std::string secret;  // empty: serve and call without one (--lp_insecure)
  // Serve and call over TLS with the launch's credentials; null: plain HTTP.
  std::shared_ptr<const tls_context> tls;
  std::string bind_host = "127.0.0.1";
  // The interpreter of the Python nodes (--lp_python).
  std::string python = "python3";
  // How long a stopping Python node may take to end.
  std::chrono::seconds termination_notice{10};
  // The host name the nodes publish, where it is not bind_host: a pod binds
  // every address and is known by its DNS name.
  std::string advertise_host;
  std::string run_dir;  // the launch's run directory, if it has one
  // Where each node also serves on a unix socket, for the callers on its
  // host (wire/local_socket.hpp); empty: TCP only (--lp_same_host=off).
  std::string socket_dir;
  std::size_t max_body_bytes = std::size_t{256} << 20;
  server_limits limits;  // each node's server's
  // Clients call nodes of this process without HTTP (lp::direct_calls<P>).
  bool direct_calls = false;
  // Told when a node's run() returns (a launcher in another process).
  std::function<void(const std::string& label)> run_finished;
  // Waits for runs of nodes hosted elsewhere, as wait_finished does here:
  // set with run_finished, by whoever that launcher is.
  std::function<bool(const std::vector<std::string>& names, const launch_state& here)>
      wait_runs_elsewhere;
  // Stop once every run() here has returned: right when this process hosts
  // the whole program and no test wants to look at it afterwards.
  bool stop_when_runs_finish = true;
  // Where checkpointed nodes save their state, and restore it from; empty:
  // they neither save nor restore. A node restores the newer of its
  // checkpoint there and its checkpoint in resume_dir (an earlier launch's).
  std::string checkpoint_dir;
  std::string resume_dir;
  // End this process when a node of a group with a health_timeout hangs
  // (a node process: its launcher restarts it or stops the program; the
  // watchdog says why no other process may be ended so).
  bool watch_health = false;
  // Where the process was placed, for lp::context().
  std::vector<int> cores, gpus;
  // Tune glibc's malloc for large values (keep_large_blocks, util/malloc_tuning.hpp):
  // a process-wide setting, which --lp_system_malloc and
  // test_options::system_malloc turn off.
  bool tune_malloc = true;
  // The cap of this process's shared memory (segment_pool; a process-wide
  // setting, --lp_shared_memory_mb); 0: none.
  std::size_t shared_memory_bytes = std::size_t{256} << 20;
};

// The socket directory of a launch's nodes on this host (socket_dir above):
// sockets/ in its run directory, made by the first process that serves
// there (0700, as the run directory is), unless --lp_same_host=off. Where
// it cannot be made, the nodes serve on TCP alone, and say why.
inline std::string same_host_dir(const launch_settings& settings,
                                 const std::string& run_dir) {
  if (!settings.process.same_host || run_dir.empty()) return {};
  auto dir = run_dir + "/" + protocol::run_directory::sockets;
  if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return dir;
  std::cerr << "[lp] cannot make " << dir << " (" << std::strerror(errno)
            << "); the nodes here serve on TCP alone" << std::endl;
  return {};
}

// Runs some nodes of a program in this process: each its own HTTP server,
// each run() its own thread. Every launch policy hosts its nodes with this:
// all of them in one process (multi-threading), or a few per process.
class node_host {
 public:
  node_host(const program& graph, host_options options)
      : graph_(graph),
        options_(std::move(options)),
        state_(std::make_shared<launch_state>(graph.name(),
                                              std::string(name_of(options_.policy)))) {
    launch_registry::get().add(state_);
    if (options_.tune_malloc) keep_large_blocks();
    segment_pool::of_process().set_cap(options_.shared_memory_bytes);
    try {
      start(graph);
    } catch (...) {
      shutdown();
      throw;
    }
  }
  node_host(const node_host&) = delete;
  node_host& operator=(const node_host&) = delete;
  ~node_host() { shutdown(); }

  launch_state& state() { return *state_; }
  const launch_state& state() const { return *state_; }
  std::shared_ptr<launch_state> shared_state() const { return state_; }
  const std::string& secret() const { return options_.secret; }

  // A channel to the node with this label; one per node, shared.
  std::shared_ptr<channel> connect(const std::string& label) {
    std::lock_guard lock(mutex_);
    auto& slot = channels_[label];
    if (slot) return slot;
    if (options_.direct_calls)
      for (auto& node : nodes_)
        if (node->identity.label == label && node->served)
          return slot = std::make_shared<direct_channel>(label, *node->served);
    return slot =
               std::make_shared<http_channel>(label, options_.nodes, channel_options());
  }

  // Waits until the run() of every node named (labels or group names) has
  // returned, or the program stops. True in the first case.
  bool wait_finished(const std::vector<std::string>& names) {
    auto wanted = runnable_labels(graph_, names);
    auto done = [&] {
      return std::includes(finished_.begin(), finished_.end(), wanted.begin(),
                           wanted.end());
    };
    std::unique_lock lock(mutex_);
    finished_changed_.wait(lock, [&] { return done() || state_->stop_requested(); });
    return done();
  }

  // lp::wait_for_runs from a node of this launch.
  bool wait_for_runs(const std::vector<std::string>& names) {
    auto wanted = runnable_labels(graph_, names);
    if (const auto* me = this_thread_node().identity; me && wanted.count(me->label))
      throw usage_error("lp::wait_for_runs(): node " + me->label +
                        " would wait for its own run(); wait for the other nodes only");
    if (options_.wait_runs_elsewhere) return options_.wait_runs_elsewhere(names, *state_);
    return wait_finished(names);
  }

  // Label -> URL of the nodes hosted here.
  std::map<std::string, std::string> urls() const {
    std::map<std::string, std::string> out;
    for (const auto& node : nodes_)
      out[node->identity.label] =
          node->python || node->executable ? node->python_url : node->server->url();
    return out;
  }

  // Label -> the process that serves the node: this one, or a Python
  // node's own, or another C++ program's.
  std::map<std::string, pid_t> pids() const {
    std::map<std::string, pid_t> out;
    for (const auto& node : nodes_)
      out[node->identity.label] = node->python       ? node->python->pid()
                                  : node->executable ? node->executable->pid()
                                                     : ::getpid();
    return out;
  }

  // Stops the program (if nobody has yet) and waits until everything it
  // started here is gone: run() threads joined, calls drained, servers
  // closed, nodes destroyed. Safe to call twice.
  void shutdown() {
    std::lock_guard once(shutdown_mutex_);
    if (done_) return;
    done_ = true;
    state_->request_stop();
    for (auto& node : nodes_)
      if (node->runner.joinable()) node->runner.join();
    // A Python node's run() heard the stop when the C++ ones did (on_stop,
    // in start) and is waited for as they are joined.
    for (auto& node : nodes_)
      if (node->python) node->python->wait_run();
    for (auto& node : nodes_)
      if (node->server) node->server->drain();
    // A Python node drains, saves its checkpoint and ends on its own.
    for (auto& node : nodes_)
      if (node->python) node->python->stop();
    for (auto& node : nodes_)
      if (node->executable) node->executable->stop();
    checkpoints_.stop();
    watchdog_.stop();
    // No call runs now: the last save holds every call answered. A node
    // that failed here may have left its state half-changed; its restart
    // takes the last periodic save instead.
    if (started_ && !state_->failure())
      for (auto& node : nodes_)
        if (node->checkpointed) save(*node);
    // Our own idle connections would keep servers' threads waiting out their
    // keep-alive; close them first so the servers stop at once.
    options_.nodes->close();
    {
      std::lock_guard lock(mutex_);
      for (auto& [label, channel] : channels_) channel->close();
    }
    for (auto& node : nodes_)
      if (node->server) node->server->stop();
    {
      std::lock_guard lock(python_mutex_);
      pythons_.clear();
      executables_.clear();
    }
    while (!nodes_.empty()) nodes_.pop_back();
    state_->set_runs_waiter({});
    launch_registry::get().remove(state_);
  }

 private:
  struct hosted_node {
    node_identity identity;
    std::string service;
    node_metrics metrics;
    bool has_run = false;
    bool checkpointed = false;  // and this launch keeps checkpoints
    std::chrono::milliseconds checkpoint_interval{0};
    std::chrono::milliseconds health_timeout{0};
    run_progress progress;  // of its run(), watched with its health_timeout
    std::unique_ptr<node_instance> instance;
    std::unique_ptr<served_node> served;
    std::unique_ptr<http_server> server;
    std::thread runner;
    // A node of a Python service: its process, which serves it.
    const python_recipe* recipe = nullptr;
    std::unique_ptr<python_node> python;
    // A node of another C++ program: its process, which serves it.
    const executable_recipe* cpp_recipe = nullptr;
    std::unique_ptr<executable_node> executable;
    std::string python_url;  // where a process of its own serves it
  };

  http_channel::options channel_options() const {
    http_channel::options settings;
    settings.secret = options_.secret;
    settings.tls = options_.tls;
    return settings;
  }

  bool hosts(const std::string& label) const {
    if (options_.labels.empty()) return true;
    for (const auto& wanted : options_.labels)
      if (wanted == label) return true;
    return false;
  }

  void start(const program& graph) {
    graph_access::check_defined(graph);
    // The one stop of the launch reaches its Python nodes as it reaches
    // its C++ ones: first of the on_stop callbacks, before any a node's
    // constructor adds. A node started after the stop hears it as it
    // starts (start_python).
    state_->on_stop([this] {
      std::lock_guard lock(python_mutex_);
      for (auto* python : pythons_) python->tell_stop();
      for (auto* executable : executables_) executable->tell_stop();
    });
    auto connector = [this](const std::string& label) { return connect(label); };
    for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
      const auto& spec = graph.nodes()[i];
      if (!hosts(spec.label)) continue;
      auto node = std::make_unique<hosted_node>();
      node->identity = {spec.label,     spec.group,       spec.index,
                        graph.name(),   state_->policy(), options_.run_dir,
                        options_.cores, options_.gpus};
      node->identity.metrics = &node->metrics;
      node->service = spec.service;
      node->has_run = spec.has_run;
      if ((node->recipe = graph_access::python(graph, i))) {
        start_python(*node, spec);
        nodes_.push_back(std::move(node));
        continue;
      }
      if ((node->cpp_recipe = graph_access::executable(graph, i))) {
        start_executable(*node, spec);
        nodes_.push_back(std::move(node));
        continue;
      }
      node_scope scope(node->identity, *state_);
      node->instance = graph_access::build(graph, i, connector);
      std::vector<std::string> names;
      for (const auto& method : node->instance->methods())
        names.emplace_back(method.name);
      node->metrics.set_methods(std::move(names));
      node->instance->count_batches(node->metrics);
      node->checkpointed =
          node->instance->checkpointed() && !options_.checkpoint_dir.empty();
      node->checkpoint_interval = graph.settings_of(spec.group).checkpoint_interval;
      if (options_.watch_health)
        node->health_timeout = graph.settings_of(spec.group).health_timeout;
      if (node->checkpointed) restore(*node);
      node->served.reset(
          new served_node{*node->instance, node->identity, *state_, node->metrics, {}});
      node->server = std::make_unique<http_server>(*node->served, options_.secret,
                                                   options_.max_body_bytes,
                                                   options_.limits, options_.tls);
      nodes_.push_back(std::move(node));
    }
    for (const auto& wanted : options_.labels)
      graph.node(wanted);  // throws for a stranger
    for (auto& node : nodes_) {
      if (node->python || node->executable) continue;
      node->server->start(
          options_.bind_host, 0,
          options_.socket_dir.empty()
              ? std::string()
              : options_.socket_dir + "/" + socket_file_name(node->identity.label));
      auto where = node->server->bound();
      if (!options_.advertise_host.empty()) where.host = options_.advertise_host;
      options_.nodes->publish(node->identity.label, where);
      if (!options_.run_dir.empty())
        record_node_address(options_.run_dir, node->identity.label, node->server->url());
      std::cerr << "[lp] " << node->identity.label << " serving at "
                << (options_.advertise_host.empty() ? node->server->url()
                                                    : where.url(options_.tls != nullptr))
                << std::endl;
    }
    for (auto& node : nodes_)
      if (node->python) publish_python(*node);
    for (auto& node : nodes_)
      if (node->executable) publish_executable(*node);
    for (const auto& node : nodes_) runnable_ += node->has_run;
    start_checkpoints();
    start_watchdog();
    started_ = true;
    state_->set_runs_waiter([this](const auto& names) { return wait_for_runs(names); });
    // wait_finished also wakes when the program stops.
    state_->on_stop([this] {
      std::lock_guard lock(mutex_);
      finished_changed_.notify_all();
    });
    for (auto& node : nodes_) {
      if (node->has_run && node->python) node->python->start_run();
      if (!node->has_run || node->python || node->executable) continue;
      node->runner = std::thread([this, node = node.get()] {
        node_scope scope(node->identity, *state_);
        watched_run watched(node->progress);
        try {
          node->instance->run();
        } catch (const stopping&) {
          // A call refused because the program stops ends a run() as
          // cleanly as the stop does, once this process knows of the stop.
          if (!state_->stop_requested())
            state_->fail(node->identity.label, std::current_exception());
          return;
        } catch (...) {
          state_->fail(node->identity.label, std::current_exception());
          return;
        }
        run_returned(node->identity.label);
      });
    }
  }

  void run_returned(const std::string& label) {
    if (options_.run_finished) options_.run_finished(label);
    bool all_done;
    {
      std::lock_guard lock(mutex_);
      finished_.insert(label);
      all_done = finished_.size() == runnable_;
      finished_changed_.notify_all();
    }
    // A program whose run() nodes have all returned has nothing left to do.
    if (all_done && options_.stop_when_runs_finish && !options_.run_finished)
      state_->request_stop();
  }

  // Starts the Python node's process; publish_python waits until it serves,
  // so that every Python node imports its modules at the same time.
  void start_python(hosted_node& node, const node_info& spec) {
    const auto& group = graph_.settings_of(spec.group);
    python_settings settings;
    settings.interpreter = options_.python;
    settings.program = graph_.name();
    settings.bind_host = options_.bind_host;
    if (!options_.socket_dir.empty())
      settings.socket_path = options_.socket_dir + "/" + socket_file_name(spec.label);
    settings.secret = options_.secret;
    if (options_.tls) settings.tls = options_.tls->credentials();
    settings.termination_notice = options_.termination_notice;
    settings.max_body_bytes = options_.max_body_bytes;
    settings.shared_memory_bytes = options_.shared_memory_bytes;
    settings.tune_malloc = options_.tune_malloc;
    if (options_.watch_health) settings.health_timeout = group.health_timeout;
    if (spec.checkpointed && !options_.checkpoint_dir.empty()) {
      settings.checkpoint_save = checkpoint_path(options_.checkpoint_dir, spec.label);
      settings.checkpoint_restore =
          checkpoint_to_restore(options_.checkpoint_dir, options_.resume_dir, spec.label);
      settings.checkpoint_interval = group.checkpoint_interval;
    }
    // Threads share their process's environment; a Python node has its own.
    settings.env = group.env;
    if (!options_.gpus.empty()) {
      auto& devices = settings.env["CUDA_VISIBLE_DEVICES"];
      for (int gpu : options_.gpus)
        devices += (devices.empty() ? "" : ",") + std::to_string(gpu);
    }
    std::vector<std::string> names;
    if (node.recipe->methods)  // a Launchpad program's node lists none ahead
      for (const auto& method : *node.recipe->methods) names.emplace_back(method.name);
    node.metrics.set_methods(std::move(names));
    auto* at = &node;
    python_node::events tell;
    tell.finished = [this, at] { run_returned(at->identity.label); };
    tell.stop = [this, at] {
      node_scope scope(at->identity, *state_);
      state_->request_stop();
    };
    tell.follow = [this, at] {
      node_scope scope(at->identity, *state_);
      state_->follow_stop();
    };
    tell.ended = [this, at](int status, const std::string& why) {
      // A Python node that hung ended itself as the watchdog ends a C++
      // node's process: this process ends with its status, for its
      // launcher to say which part hung (its lines are out already).
      if (options_.watch_health && WIFEXITED(status) &&
          (WEXITSTATUS(status) == hung_exit_status ||
           WEXITSTATUS(status) == hung_run_exit_status))
        std::_Exit(WEXITSTATUS(status));
      state_->fail(at->identity.label,
                   std::make_exception_ptr(launch_error(
                       "Python node '" + at->identity.label + "' ended: " + why)));
    };
    // A peer on this host is called on its unix socket (the Python node
    // runs on this host, in this network namespace).
    tell.lookup = [this](const std::string& label) {
      // A Python node asks again only after the last address failed it
      // (its peer restarted, elsewhere): that one is not answered again.
      {
        std::lock_guard lock(python_mutex_);
        if (auto told = told_python_.find(label); told != told_python_.end())
          options_.nodes->forget(label, told->second);
      }
      auto where = options_.nodes->lookup(label, "", std::chrono::seconds(60));
      {
        std::lock_guard lock(python_mutex_);
        told_python_[label] = where;
      }
      auto answer = where.url(options_.tls != nullptr);
      if (!where.socket.empty() && where.host_id == host_identity())
        answer += " " + where.socket;
      return answer;
    };
    tell.output = [this, at](bool error, const std::string& line) {
      node_scope scope(at->identity, *state_);
      (error ? std::cerr : std::cout) << line << std::endl;
    };
    node.python = std::make_unique<python_node>(spec, *node.recipe, std::move(settings),
                                                std::move(tell));
    {
      std::lock_guard lock(python_mutex_);
      pythons_.push_back(node.python.get());
    }
    if (state_->stop_requested()) node.python->tell_stop();
  }

  void publish_python(hosted_node& node) {
    node.python_url = node.python->wait_serving(std::chrono::seconds(120));
    auto where = address_of_url(node.python_url);
    if (!where)
      throw launch_error("Python node '" + node.identity.label + "' serves at '" +
                         node.python_url + "', which is no http(s)://host:port");
    if (!options_.advertise_host.empty()) where->host = options_.advertise_host;
    if (!options_.socket_dir.empty()) {
      where->socket = options_.socket_dir + "/" + socket_file_name(node.identity.label);
      where->host_id = host_identity();
    }
    options_.nodes->publish(node.identity.label, *where);
    if (!options_.run_dir.empty())
      record_node_address(options_.run_dir, node.identity.label, node.python_url);
    node_scope scope(node.identity, *state_);
    std::cerr << "[lp] " << node.identity.label << " serving at "
              << where->url(options_.tls != nullptr) << std::endl;
  }

  // Starts the process of a node of another C++ program (a Launchpad
  // program's CppNode); publish_executable waits until it serves.
  void start_executable(hosted_node& node, const node_info& spec) {
    // Its process binds loopback, as local_mp's node processes do: the
    // callers on other hosts (Slurm) or pods (Kubernetes) would not reach it.
    if (options_.policy == policy_kind::slurm ||
        options_.policy == policy_kind::kubernetes)
      throw launch_error(
          "node '" + spec.label + "' is a node of " + node.cpp_recipe->path +
          ", which runs under local_mt, local_mp, test_mt and test_mp, not " +
          std::string(name_of(options_.policy)) + " yet");
    executable_settings settings;
    settings.secret = options_.secret;
    settings.tls = options_.tls;
    settings.parent_dir = options_.run_dir.empty() ? "/tmp" : options_.run_dir;
    settings.same_host = !options_.socket_dir.empty();
    settings.max_body_bytes = options_.max_body_bytes;
    settings.shared_memory_bytes = options_.shared_memory_bytes;
    settings.tune_malloc = options_.tune_malloc;
    settings.termination_notice = options_.termination_notice;
    settings.env = graph_.settings_of(spec.group).env;
    auto* at = &node;
    executable_node::events tell;
    tell.finished = [this, at] { run_returned(at->identity.label); };
    tell.stop = [this, at] {
      node_scope scope(at->identity, *state_);
      state_->request_stop();
    };
    tell.ended = [this, at](const std::string& why) {
      state_->fail(at->identity.label,
                   std::make_exception_ptr(
                       launch_error("node '" + at->identity.label + "' ended: " + why)));
    };
    tell.output = [this, at](bool error, const std::string& line) {
      node_scope scope(at->identity, *state_);
      (error ? std::cerr : std::cout) << line << std::endl;
    };
    node.executable = std::make_unique<executable_node>(
        spec.label, *node.cpp_recipe, std::move(settings), std::move(tell));
    {
      std::lock_guard lock(python_mutex_);
      executables_.push_back(node.executable.get());
    }
    if (state_->stop_requested()) node.executable->tell_stop();
  }

  void publish_executable(hosted_node& node) {
    auto where = node.executable->wait_serving(std::chrono::seconds(120));
    node.python_url = where.url(options_.tls != nullptr);
    if (!options_.advertise_host.empty()) where.host = options_.advertise_host;
    if (options_.socket_dir.empty()) where.socket = where.host_id = "";
    options_.nodes->publish(node.identity.label, where);
    if (!options_.run_dir.empty())
      record_node_address(options_.run_dir, node.identity.label, node.python_url);
    node_scope scope(node.identity, *state_);
    std::cerr << "[lp] " << node.identity.label << " serving at "
              << where.url(options_.tls != nullptr) << " (process "
              << node.executable->pid() << ", node " << node.cpp_recipe->node << " of "
              << node.cpp_recipe->path << ")" << std::endl;
  }

  // Callers never see a restarted node's empty state: it restores before
  // it serves.
  void restore(hosted_node& node) {
    auto path = checkpoint_to_restore(options_.checkpoint_dir, options_.resume_dir,
                                      node.identity.label);
    if (path.empty()) return;
    auto state = read_checkpoint(path, node.service);
    if (!state) return;
    try {
      node.instance->restore(*state);
    } catch (const decode_error& e) {
      throw checkpoint_error("the checkpoint " + path + " does not hold a state of " +
                             node.service + " (" + e.reason() + ")");
    }
    std::cerr << "[lp] " << node.identity.label << " restored from " << path << std::endl;
  }

  // A save that fails (a full disk) costs that checkpoint, not the node.
  void save(hosted_node& node) {
    node_scope scope(node.identity, *state_);
    auto path = checkpoint_path(options_.checkpoint_dir, node.identity.label);
    try {
      write_checkpoint(path, node.service, node.instance->save());
    } catch (const std::exception& e) {
      std::cerr << "[lp] " << node.identity.label << ": no checkpoint saved: " << e.what()
                << std::endl;
    }
  }

  void start_checkpoints() {
    std::vector<checkpoint_schedule::saved_node> saved;
    for (auto& node : nodes_)
      if (node->checkpointed && node->checkpoint_interval.count() > 0)
        saved.push_back(
            {node->checkpoint_interval, [this, node = node.get()] { save(*node); }});
    checkpoints_.start(std::move(saved));
  }

  void start_watchdog() {
    std::vector<watched_node> watched;
    for (auto& node : nodes_)
      if (node->health_timeout.count() > 0)
        watched.push_back({node->identity.label, node->health_timeout,
                           [node = node.get()] { node->instance->probe(); },
                           node->metrics, node->progress});
    watchdog_.start(*state_, std::move(watched));
  }

  const program& graph_;
  host_options options_;
  std::shared_ptr<launch_state> state_;
  std::vector<std::unique_ptr<hosted_node>> nodes_;
  std::mutex mutex_;
  std::condition_variable finished_changed_;
  std::set<std::string> finished_;
  std::map<std::string, std::shared_ptr<channel>> channels_;
  std::mutex python_mutex_;
  std::vector<python_node*> pythons_;           // told of the stop (on_stop)
  std::map<std::string, address> told_python_;  // each label's last lookup
  std::vector<executable_node*> executables_;   // told of the stop (on_stop)
  std::mutex shutdown_mutex_;
  bool done_ = false;
  checkpoint_schedule checkpoints_;
  watchdog watchdog_;
  bool started_ = false;      // every node built, restored and serving
  std::size_t runnable_ = 0;  // nodes with a run()
};

}  // namespace lp::detail
