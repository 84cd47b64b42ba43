#pragma once

// A node that is a node of another C++ program built with the library (a
// Launchpad program's launchpad.CppNode): its host starts that program's
// executable in its node-process mode, as local_mp starts a node process
// (it builds its own graph and runs only the node named), and the node's
// callers call that process directly. The host plays its launcher: the
// process finds the launch's secret and TLS credentials in a directory of
// its own (0700, in the launch's run directory, removed with the node),
// publishes its address to a rendezvous the host serves on loopback, which
// the host publishes under the node's label in this launch, and says there
// when its run() returns or it asks the program to stop. Its stop is the
// host's SIGTERM, and a SIGKILL after the termination notice.
//
// Its graph holds none of this launch's nodes: a node that needs handles
// of its own program's other nodes is refused where it is described
// (graph_access::add_described; the script's CppNode names it earlier).

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <launchpad/detail/graph/executable_recipe.hpp>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/error.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

struct executable_settings {
  std::string secret;                      // empty: serve without one
  std::shared_ptr<const tls_context> tls;  // null: plain HTTP
  std::string parent_dir;                  // where its own directory goes
  bool same_host = true;                   // serve on a unix socket too
  std::size_t max_body_bytes = std::size_t{256} << 20;
  std::size_t shared_memory_bytes = std::size_t{256} << 20;
  bool tune_malloc = true;
  std::chrono::seconds termination_notice{10};
  std::map<std::string, std::string> env;  // its group's
};

// How long a node asked to stop may take past the termination notice
// before it is killed (as python_stop_grace, for a process that also
// saves nothing).
inline constexpr std::chrono::seconds executable_stop_grace{5};

class executable_node {
 public:
  struct events {
    std::function<void()> finished;  // its run() returned
    std::function<void()> stop;      // it asked the program to stop
    // The process ended when nobody asked it to: its wait status, in words.
    std::function<void(const std::string& why)> ended;
    std::function<void(bool error, const std::string& line)> output;
  };

  executable_node(std::string label, const executable_recipe& recipe,
                  executable_settings settings, events tell)
      : label_(std::move(label)),
        recipe_(recipe),
        settings_(std::move(settings)),
        tell_(std::move(tell)) {
    make_directory();
    rendezvous_server::callbacks on;
    on.published = [this](const std::string&, const address& where) {
      std::lock_guard lock(mutex_);
      where_ = where;
      changed_.notify_all();
    };
    on.stop_requested = [this](const std::string&) {
      if (tell_.stop) tell_.stop();
    };
    on.run_finished = [this](const std::string&) {
      if (tell_.finished) tell_.finished();
    };
    on.runs_finished = [this](const std::vector<std::string>&,
                              std::chrono::milliseconds) -> std::optional<bool> {
      throw usage_error("lp::wait_for_runs() in node '" + recipe_.node + "' of " +
                        recipe_.path + ", which runs as " + label_ +
                        " of another program: its program's other nodes do not run");
    };
    rendezvous_ = std::make_unique<rendezvous_server>(settings_.secret, std::move(on),
                                                      "127.0.0.1", settings_.tls);
    try {
      start();
    } catch (...) {
      remove_directory();
      throw;
    }
  }
  executable_node(const executable_node&) = delete;
  executable_node& operator=(const executable_node&) = delete;
  ~executable_node() {
    stop();
    for (auto* thread : {&out_reader_, &err_reader_, &waiter_})
      if (thread->joinable()) thread->join();
    rendezvous_.reset();
    remove_directory();
  }

  pid_t pid() const { return pid_; }

  // Waits until the node serves; returns where. Throws launch_error with
  // its last lines if it ended first, or did not serve in time.
  address wait_serving(std::chrono::steady_clock::duration timeout) {
    std::unique_lock lock(mutex_);
    bool settled = changed_.wait_for(lock, timeout, [&] { return where_ || exited_; });
    if (where_) return *where_;
    if (!settled) {
      lock.unlock();
      stop();
      lock.lock();
    }
    changed_.wait_for(lock, std::chrono::seconds(2), [&] { return outputs_open_ == 0; });
    throw launch_error(
        "node '" + label_ + "' (node '" + recipe_.node + "' of " + recipe_.path + ") " +
        (settled ? how_it_ended() + " before it served"
                 : "did not serve within " +
                       std::to_string(
                           std::chrono::duration_cast<std::chrono::seconds>(timeout)
                               .count()) +
                       " s") +
        last_lines_text());
  }

  // The program stops: the process hears it as a node process hears its
  // launcher's stop (SIGTERM), and its end is no failure from now on.
  void tell_stop() {
    std::lock_guard lock(mutex_);
    if (pid_ <= 0 || exited_ || stopping_) return;
    stopping_ = true;
    ::kill(pid_, SIGTERM);
  }

  // Ends the process as a launcher ends a node process: SIGTERM, then
  // SIGKILL of its process group after the termination notice. Safe to
  // call twice.
  void stop() {
    std::unique_lock lock(mutex_);
    if (pid_ <= 0 || exited_) return;
    if (!stopping_) {
      stopping_ = true;
      ::kill(pid_, SIGTERM);
    }
    if (!changed_.wait_for(lock, settings_.termination_notice + executable_stop_grace,
                           [&] { return exited_; })) {
      ::kill(-pid_, SIGKILL);
      changed_.wait(lock, [&] { return exited_; });
    }
  }

 private:
  // Its own run directory: the launch's secret and credentials, for it
  // alone to read, and its sockets, apart from this launch's (its node's
  // label is its program's, which may be one of this program's labels).
  void make_directory() {
    std::string name;
    for (char c : label_) name += (c == '/' ? '-' : c);
    std::string pattern = settings_.parent_dir + "/lp-node-" + name + "-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw launch_error("cannot make a directory for node '" + label_ + "' under " +
                         settings_.parent_dir + ": " + std::strerror(errno));
    dir_ = pattern;
    group_reaper::of_this_process().clear(dir_);
    try {
      if (!settings_.secret.empty())
        write_private_file(dir_ + "/" + protocol::run_directory::secret,
                           settings_.secret + "\n");
      if (settings_.tls) {
        const auto& tls = settings_.tls->credentials();
        write_private_file(dir_ + "/" + run_directory::certificate_file, tls.certificate);
        write_private_file(dir_ + "/" + run_directory::key_file, tls.key);
        if (tls.authority != tls.certificate)
          write_private_file(dir_ + "/" + run_directory::authority_file, tls.authority);
      }
    } catch (...) {
      remove_directory();
      throw;
    }
  }

  void remove_directory() {
    if (dir_.empty()) return;
    run_directory::clear(dir_);
    group_reaper::of_this_process().spare(dir_);
    dir_.clear();
  }

  std::vector<std::string> flags() const {
    auto mb = [](std::size_t bytes) { return std::to_string(bytes >> 20); };
    std::vector<std::string> out = {
        "--lp_max_body_mb=" + mb(settings_.max_body_bytes),
        "--lp_shared_memory_mb=" + mb(settings_.shared_memory_bytes),
        "--lp_termination_notice_secs=" +
            std::to_string(settings_.termination_notice.count())};
    if (!settings_.same_host)
      out.push_back(std::string("--lp_same_host=") + protocol::same_host::flag_off);
    if (!settings_.tune_malloc) out.emplace_back("--lp_system_malloc");
    return out;
  }

  void start() {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    auto close_all = [&] {
      for (int fd : {out[0], out[1], err[0], err[1]})
        if (fd >= 0) ::close(fd);
    };
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      auto why = std::string(std::strerror(errno));
      close_all();
      throw launch_error("cannot create the pipes of node '" + label_ + "': " + why);
    }
    child_process child;
    child.executable = recipe_.path;
    child.arguments.push_back(recipe_.path);
    child.arguments.insert(child.arguments.end(), recipe_.arguments.begin(),
                           recipe_.arguments.end());
    for (auto& flag : flags()) child.arguments.push_back(std::move(flag));
    // What a node process learns from its launcher (child_env.hpp): it is
    // local_mp's kind of node process, on this host, this process its
    // launcher.
    auto set = [&](const char* name, const std::string& value) {
      child.environment.push_back(std::string(name) + "=" + value);
    };
    set(child_env::nodes, recipe_.node);
    set(child_env::rendezvous, rendezvous_->url());
    set(child_env::launcher, std::to_string(::getpid()));
    set(child_env::policy, "local_mp");
    set(child_env::run_dir, dir_);
    for (const auto& [name, value] : settings_.env) set(name.c_str(), value);
    child.output_fd = out[1];
    child.error_fd = err[1];
    try {
      pid_ = spawn(child);
    } catch (...) {
      close_all();
      throw;
    }
    group_reaper::of_this_process().watch(pid_);
    for (int fd : {out[1], err[1]}) ::close(fd);
    outputs_open_ = 2;
    out_reader_ = std::thread([this, fd = out[0]] { read_output(fd, false); });
    err_reader_ = std::thread([this, fd = err[0]] { read_output(fd, true); });
    waiter_ = std::thread([this] { wait_for_exit(); });
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

  void wait_for_exit() {
    int status = reap_with_group(pid_);
    bool unasked;
    {
      std::lock_guard lock(mutex_);
      exited_ = true;
      status_ = status;
      unasked = !stopping_ && where_;  // before it served, wait_serving tells
      changed_.notify_all();
    }
    if (unasked && tell_.ended) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, std::chrono::seconds(2),
                          [&] { return outputs_open_ == 0; });
      }
      tell_.ended(how_it_ended() + last_lines_text());
    }
  }

  std::string how_it_ended() const {
    return "its process (" + recipe_.path + ") " + describe_status(status_);
  }

  std::string last_lines_text() const {
    std::string text;
    for (const auto& line : last_lines_) text += "\n  " + line;
    return text.empty() ? text : ":" + text;
  }

  std::string label_;
  executable_recipe recipe_;
  executable_settings settings_;
  events tell_;
  std::string dir_;
  std::unique_ptr<rendezvous_server> rendezvous_;
  pid_t pid_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<address> where_;
  bool stopping_ = false;
  bool exited_ = false;
  int status_ = 0;
  int outputs_open_ = 0;
  std::deque<std::string> last_lines_;

  std::thread out_reader_, err_reader_, waiter_;
};

}  // namespace lp::detail
