#pragma once

// A node of a Python service (LP_PYTHON), as the process that hosts it sees
// it: a child process running `python3 -m launchpad_client.runtime`, which
// serves the node itself on the launch's wire. Its host sends it its spec
// (with the launch's secret and credentials) over a socket pair, never
// through a file, forwards the child's output as the node's, answers its
// address lookups over the same socket, and stops it in order
// (docs/python_nodes.md).
//
// The control socket carries the spec first (`spec <J> <C>`, J bytes of
// JSON, C bytes of CBOR: the constructor's arguments), then lines. From the node: `serving <url>`,
// `finished` (run() returned), `stop` (it asked the program to stop),
// `follow` (a peer refused a call for stopping), `address <label>`; from the
// host: `run` (every node serves: call run()), `stop` (the program stops:
// stop_requested() is true), `end` (drain, save, exit), and the answers to
// lookups, `address <label> <url>` (and the node's unix socket, where it
// has one on this host: `address <label> <url> <socket path>`) or
// `address <label> - <why>`
// (protocol.toml's python_control, which the runtime reads too).

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <launchpad/detail/graph/python_recipe.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/detail/wire/schema.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace lp::detail {

// The runtime's exit statuses for a node that no restart can mend are
// protocol::exit_status's (protocol.toml, which the runtime reads too).
// And, as a C++ node process's, for a node that hung: hung_exit_status and
// hung_run_exit_status (launch_state.hpp).

// A Python node that could not start for a reason a restart cannot mend: a
// module that does not import, a class that differs from its declaration,
// a checkpoint it cannot read.
class python_start_error : public launch_error {
 public:
  using launch_error::launch_error;
};

// How long a Python node may take to end once its run() has returned,
// beyond its calls' termination notice: its last save, its exit (the
// runtime's STOP_GRACE).
inline constexpr std::chrono::seconds python_stop_grace{30};

// What a host gives each of its Python nodes.
struct python_settings {
  std::string interpreter = "python3";  // a name found on PATH, or a path
  std::string program;
  std::string bind_host = "127.0.0.1";
  // Where it also serves on a unix socket, for callers on its host
  // (wire/local_socket.hpp); empty: TCP only.
  std::string socket_path;
  std::string secret;              // empty: --lp_insecure
  tls_credentials tls;             // empty: plain HTTP
  std::string checkpoint_save;     // empty: keeps no checkpoints
  std::string checkpoint_restore;  // empty: starts empty
  std::chrono::milliseconds checkpoint_interval{0};
  std::chrono::seconds termination_notice{10};
  // Its group's health_timeout, where its host watches health (a
  // launcher's node process): the runtime ends itself when the node hangs,
  // as a C++ node process does. Zero: not watched.
  std::chrono::milliseconds health_timeout{0};
  std::size_t max_body_bytes = std::size_t{256} << 20;
  // The cap of its process's shared-memory pool (--lp_shared_memory_mb,
  // host_options::shared_memory_bytes); 0: none.
  std::size_t shared_memory_bytes = std::size_t{256} << 20;
  std::map<std::string, std::string> env;  // the group's, beside the host's own
  // Only import the class and compare it with its declaration, then end
  // (check_python_nodes).
  bool check_only = false;
  // Tune the node's glibc malloc as a C++ node's (keep_large_blocks, and
  // give back what it keeps once a load has gone): a 4 MB body's blocks
  // stay the process's, not the kernel's, between calls.
  bool tune_malloc = true;
};

class python_node {
 public:
  // What the node tells its host, each on the thread that reads it.
  struct events {
    std::function<void()> finished;  // its run() returned
    std::function<void()> stop;      // it asked the program to stop
    std::function<void()> follow;    // a peer told it the program stops
    // The process ended when nobody asked it to: its wait status, and what
    // happened in words.
    std::function<void(int status, const std::string& why)> ended;
    // The URL of the node with this label; throws if there is none.
    std::function<std::string(const std::string& label)> lookup;
    // A line the node wrote, on its stderr or stdout.
    std::function<void(bool error, const std::string& line)> output;
  };

  python_node(const node_info& spec, const python_recipe& recipe,
              python_settings settings, events tell)
      : label_(spec.label),
        settings_(std::move(settings)),
        tell_(std::move(tell)),
        executable_(interpreter(settings_.interpreter)),
        spec_(spec_message(spec, recipe)) {
    start(spec.label);
  }
  python_node(const python_node&) = delete;
  python_node& operator=(const python_node&) = delete;
  ~python_node() {
    stop();
    for (auto* thread : {&control_reader_, &out_reader_, &err_reader_, &waiter_})
      if (thread->joinable()) thread->join();
    if (control_ >= 0) ::close(control_);
  }

  // Waits until the node serves; returns its URL. Throws python_start_error
  // (or launch_error, for a runtime that is not there) with the last lines
  // it wrote if it ended first.
  std::string wait_serving(std::chrono::steady_clock::duration timeout) {
    std::unique_lock lock(mutex_);
    bool settled =
        changed_.wait_for(lock, timeout, [&] { return !url_.empty() || exited_; });
    if (!url_.empty()) return url_;
    if (!settled) {
      lock.unlock();
      stop();
      throw launch_error(
          "Python node '" + label_ + "' did not serve within " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
          " s (is its __init__ or a module it imports waiting on something?)" +
          last_lines_text());
    }
    // Its last lines come on other threads: wait for them to be read.
    changed_.wait_for(lock, std::chrono::seconds(2), [&] { return outputs_open_ == 0; });
    fail_to_start();
  }

  pid_t pid() const { return pid_; }

  // For check_only: waits until the check ends; throws as wait_serving
  // does if the class differs from its declaration or cannot be had.
  void wait_checked() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return exited_ && outputs_open_ == 0; });
    if (!WIFEXITED(status_) || WEXITSTATUS(status_) != 0) fail_to_start();
  }

  // Calls the node's run(), once every node of the launch serves.
  void start_run() {
    {
      std::lock_guard lock(mutex_);
      run_started_ = true;
    }
    say(protocol::python_control::run);
  }

  // The program stops: the node's stop_requested() is true from now on,
  // as lp::stop_requested() is for the host's C++ nodes.
  void tell_stop() { say(protocol::python_control::stop); }

  // Waits until the node's run() has returned (at once if it has none, or
  // was never started, or the process is gone). No bound of its own: a
  // Python run() is given what a host gives a C++ one, which it joins.
  void wait_run() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !run_started_ || run_returned_ || exited_; });
  }

  // Ends the node: it drains its calls, saves its checkpoint and exits
  // (after its run() returned, if it has not yet); it is killed if it has
  // not ended after the termination notice and python_stop_grace. One that
  // never served is killed at once: it has nothing to drain or save. Safe
  // to call twice.
  void stop() {
    std::unique_lock lock(mutex_);
    if (pid_ <= 0 || exited_) return;
    if (!stopping_) {
      stopping_ = true;
      if (url_.empty())
        ::kill(-pid_, SIGKILL);
      else
        say(protocol::python_control::end);
    }
    if (!changed_.wait_for(lock, settings_.termination_notice + python_stop_grace,
                           [&] { return exited_; })) {
      ::kill(-pid_, SIGKILL);
      changed_.wait(lock, [&] { return exited_; });
    }
  }

 private:
  // One line to the node, after its spec; lines from several threads never
  // interleave. A line to a node that is gone is lost quietly.
  void say(std::string_view line) {
    std::string text = std::string(line) + "\n";
    std::unique_lock lock(write_mutex_);
    spec_written_.wait(lock, [&] { return spec_sent_; });
    send_all(text);
  }

  // MSG_NOSIGNAL: a node that is gone raises no SIGPIPE here.
  void send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      auto sent = ::send(control_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) return;  // the node is gone: its end says why
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
  }

  // The control socket's first bytes, on the thread that reads it: the
  // node reads them before anything else (a large argument may fill the
  // socket's buffer until it does).
  void send_spec() {
    {
      std::lock_guard lock(write_mutex_);
      send_all(spec_);
      spec_sent_ = true;
    }
    spec_written_.notify_all();
    std::string().swap(spec_);  // it holds the secret and the key: not kept
  }

  // `spec <J> <C>\n`, the JSON spec and the arguments in CBOR.
  LP_API std::string spec_message(const node_info& spec, const python_recipe& recipe);

  void start(const std::string& label) {
    int control[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    auto close_all = [&] {
      for (int fd : {control[0], control[1], out[0], out[1], err[0], err[1]})
        if (fd >= 0) ::close(fd);
    };
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0 ||
        ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      auto why = std::string(std::strerror(errno));
      close_all();
      throw launch_error("cannot create the pipes of a Python node: " + why);
    }
    child_process child;
    child.executable = executable_;
    child.arguments = {settings_.interpreter, "-m",
                       protocol::python_runtime::entry_module};
    if (settings_.check_only)
      child.arguments.emplace_back(protocol::python_runtime::check);
    // Only for ps: the spec comes over the control socket.
    child.arguments.push_back(protocol::python_runtime::node + settings_.program + "/" +
                              label);
    child.environment.push_back(std::string(protocol::environment::python_control_fd) +
                                "=3");
    // The runtime tunes its malloc itself (launchpad_client/_node/malloc_tuning.py),
    // unless the user's environment sets it.
    if (settings_.tune_malloc)
      child.environment.push_back(std::string(protocol::environment::tune_malloc) + "=1");
    child.environment.push_back("PYTHONUNBUFFERED=1");
    for (const auto& [name, value] : settings_.env)
      child.environment.push_back(name + "=" + value);
    child.output_fd = out[1];
    child.error_fd = err[1];
    child.passed_fd = control[1];
    try {
      pid_ = spawn(child);
    } catch (const exec_error& e) {
      close_all();
      // A file that is no program for this machine, say.
      throw bad_interpreter(settings_.interpreter, "cannot be run (" + e.reason + ")");
    } catch (...) {
      close_all();
      throw;
    }
    // What it starts (a data loader) is in its group: killed with it, and
    // by the reaper if this process dies first.
    group_reaper::of_this_process().watch(pid_);
    control_ = control[0];
    for (int fd : {control[1], out[1], err[1]}) ::close(fd);
    outputs_open_ = 2;
    out_reader_ = std::thread([this, fd = out[0]] { read_output(fd, false); });
    err_reader_ = std::thread([this, fd = err[0]] { read_output(fd, true); });
    control_reader_ = std::thread([this] { read_control(); });
    waiter_ = std::thread([this] { wait_for_exit(); });
  }

  // The interpreter to start: a name found on PATH, or a path. One that
  // cannot be run is named before anything starts, with the flag that
  // chose it, rather than taken for a package the interpreter lacks.
  static std::string interpreter(const std::string& name) {
    if (name.find('/') == std::string::npos) {
      if (auto found = on_path(name)) return *found;
      throw launch_error("no Python interpreter '" + name +
                         "' on PATH for the Python nodes; install python3" +
                         interpreter_fix());
    }
    struct stat about {};
    if (::stat(name.c_str(), &about) != 0)
      throw bad_interpreter(name,
                            std::string("is not there (") + std::strerror(errno) + ")");
    if (S_ISDIR(about.st_mode))
      throw bad_interpreter(name, "is a directory, not a program");
    if (!S_ISREG(about.st_mode) || ::access(name.c_str(), X_OK) != 0)
      throw bad_interpreter(name, "is not an executable file");
    return name;
  }
  static launch_error bad_interpreter(const std::string& name, const std::string& why) {
    return launch_error("the Python interpreter '" + name + "' (--lp_python) " + why +
                        interpreter_fix());
  }
  static std::string interpreter_fix() {
    return "; name one with --lp_python=PATH (lp::test_options::python in a test), such "
           "as /usr/bin/python3 or a virtualenv's bin/python";
  }

  void read_output(int fd, bool error) {
    each_line(fd, [&](std::string&& line) {
      if (error) {
        std::lock_guard lock(mutex_);
        last_lines_.push_back(line);
        if (last_lines_.size() > 12) last_lines_.pop_front();
      }
      if (tell_.output) tell_.output(error, line);
    });
    ::close(fd);
    std::lock_guard lock(mutex_);
    --outputs_open_;
    changed_.notify_all();
  }

  void read_control() {
    send_spec();
    each_line(control_, [&](std::string&& line) {
      std::string_view text = line;
      namespace lines = protocol::python_control;
      if (text.starts_with(lines::serving)) {
        std::lock_guard lock(mutex_);
        url_ = text.substr(std::string_view(lines::serving).size());
        changed_.notify_all();
      } else if (text == lines::finished) {
        {
          std::lock_guard lock(mutex_);
          run_returned_ = true;
          changed_.notify_all();
        }
        if (tell_.finished) tell_.finished();
      } else if (text == lines::stop) {
        if (tell_.stop) tell_.stop();
      } else if (text == lines::follow) {
        if (tell_.follow) tell_.follow();
      } else if (text.starts_with(lines::address)) {
        answer_lookup(std::string(text.substr(std::string_view(lines::address).size())));
      }
    });
  }

  void answer_lookup(const std::string& label) {
    std::string answer;
    try {
      answer = protocol::python_control::address + label + " " + tell_.lookup(label);
    } catch (const std::exception& e) {
      std::string why = e.what();
      for (auto& c : why)
        if (c == '\n') c = ' ';
      answer = protocol::python_control::address + label + " " +
               protocol::python_control::no_address + why;
    }
    say(answer);
  }

  void wait_for_exit() {
    int status = reap_with_group(pid_);
    // A node killed could not remove its unix socket: no caller is to dial
    // a dead one (a node that ended removed it already).
    struct stat socket_file {};
    if (!settings_.socket_path.empty() &&
        ::lstat(settings_.socket_path.c_str(), &socket_file) == 0 &&
        S_ISSOCK(socket_file.st_mode))
      ::unlink(settings_.socket_path.c_str());
    // Its end unblocks the control reader: no one else holds the socket.
    ::shutdown(control_, SHUT_RDWR);
    bool unasked;
    {
      std::lock_guard lock(mutex_);
      exited_ = true;
      status_ = status;
      unasked = !stopping_ && !url_.empty();  // before it served, wait_serving tells
      changed_.notify_all();
    }
    if (unasked && tell_.ended) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, std::chrono::seconds(2),
                          [&] { return outputs_open_ == 0; });
      }
      tell_.ended(status, ended_how() + last_lines_text());
    }
  }

  std::string ended_how() const {
    if (WIFEXITED(status_) && WEXITSTATUS(status_) == 0)
      return "its Python process exited";
    return "its Python process " + describe_status(status_);
  }

  std::string last_lines_text() const {
    std::string text;
    for (const auto& line : last_lines_) text += "\n  " + line;
    return text.empty() ? text : ":" + text;
  }

  [[noreturn]] void fail_to_start() const {
    int code = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    std::string what = "Python node '" + label_ + "' could not start: ";
    namespace exits = protocol::exit_status;
    if (code == exits::import_failed || code == exits::types_differ ||
        code == exits::checkpoint_unreadable)
      throw python_start_error(what.substr(0, what.size() - 2) + last_lines_text());
    // An __init__ that raised may find next time what it lacked (a GPU in
    // use), as a C++ constructor may: its group's restarts apply.
    if (code == exits::construction_failed)
      throw launch_error(what.substr(0, what.size() - 2) + last_lines_text());
    // The runtime itself did not run: most often the package is not where
    // this interpreter looks.
    throw python_start_error(what + "its Python process " + describe_status(status_) +
                             " before it served" + last_lines_text() +
                             "\n(is launchpad_client importable by " +
                             settings_.interpreter +
                             "? Put the checkout's python/ on PYTHONPATH, or install it: "
                             "docs/python_nodes.md)");
  }

  std::string label_;
  python_settings settings_;
  events tell_;
  std::string executable_;
  std::string spec_;  // until send_spec
  pid_t pid_ = -1;
  int control_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::mutex write_mutex_;  // one line at a time on control_, the spec first
  std::condition_variable spec_written_;
  bool spec_sent_ = false;
  std::string url_;
  bool stopping_ = false;
  bool run_started_ = false;
  bool run_returned_ = false;
  bool exited_ = false;
  int status_ = 0;
  int outputs_open_ = 0;
  std::deque<std::string> last_lines_;

  std::thread control_reader_, out_reader_, err_reader_, waiter_;
};

// Checks the class of every Python node of `graph` against its declaration,
// each class once and all at once, before a launch of processes starts any
// node: so that a mismatch ends the launch before any node runs, as it
// does under the thread policies. Throws python_start_error.
inline void check_python_nodes(const program& graph, const std::string& interpreter) {
  std::vector<std::unique_ptr<python_node>> checks;
  // A group's env (a PYTHONPATH of its own) may find another class.
  std::set<std::pair<std::string, std::map<std::string, std::string>>> seen;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const auto& spec = graph.nodes()[i];
    const auto* recipe = graph_access::python(graph, i);
    auto env = graph.settings_of(spec.group).env;
    // A Launchpad program's node has no declaration to compare with.
    if (!recipe || !recipe->methods || !seen.emplace(spec.service, env).second) continue;
    python_settings settings;
    settings.interpreter = interpreter;
    settings.program = graph.name();
    settings.env = std::move(env);
    settings.check_only = true;
    python_node::events tell;
    tell.output = [](bool error, const std::string& line) {
      if (error) std::cerr << line << std::endl;
    };
    checks.push_back(std::make_unique<python_node>(spec, *recipe, std::move(settings),
                                                   std::move(tell)));
  }
  for (auto& check : checks) check->wait_checked();
}

}  // namespace lp::detail
