#pragma once

#include <chrono>
#include <launchpad/client.hpp>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/rendezvous.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

// For tests of a program as processes, like local_multi_processing. The test
// process is the launcher; each node runs in a process of `executable`, a
// program whose main() builds the same graph and calls lp::launch (usually
// the program's own binary; build the graph in a function both share).
//
//   auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
//   running.wait({"producers"});
//   CHECK(running.client(counter).get() == 4000);
struct test_multi_processing {
  static constexpr std::string_view flag = "test_mp";
};

struct process_test_options {
  std::string executable;              // the nodes' program
  std::vector<std::string> arguments;  // its arguments after argv[0]
  std::chrono::seconds termination_notice{10};
  std::string terminal = "current";  // or "files", "tmux"
};

// A program launched as processes by a test. Destroying it stops the program
// and waits until every process it started is gone.
class process_controller {
 public:
  process_controller(const program& graph, const process_test_options& options) : graph_(&graph) {
    if (options.executable.empty())
      throw usage_error(
          "test_multi_processing needs process_test_options::executable: a program whose main() "
          "builds the same graph and calls lp::launch");
    detail::process_options settings;
    settings.policy = test_multi_processing::flag;
    settings.executable = options.executable;
    settings.arguments.push_back(options.executable);
    for (const auto& argument : options.arguments) settings.arguments.push_back(argument);
    settings.termination_notice = options.termination_notice;
    settings.terminal = options.terminal;
    settings.stop_when_runs_finish = false;
    launch_ = std::make_unique<detail::process_launch>(graph, std::move(settings));
    nodes_ = std::make_shared<detail::rendezvous_directory>(launch_->rendezvous_url(),
                                                            launch_->secret());
  }
  process_controller(const process_controller&) = delete;
  process_controller& operator=(const process_controller&) = delete;
  process_controller(process_controller&&) = default;
  ~process_controller() {
    if (launch_) stop();
  }

  // A client for any node; calls wait for a node that does not serve yet.
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("process_controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    detail::http_channel::options settings;
    settings.secret = launch_->secret();
    return lp::client<T>(std::make_shared<detail::http_channel>(node.label(), nodes_, settings));
  }

  // Waits until the run() of every node named (labels or group names) has
  // returned. False if the program stopped first.
  bool wait(const std::vector<std::string>& names) { return launch_->wait_finished(names); }

  // Waits until every process has ended: a node called lp::stop() or failed,
  // or stop() was called (a program under test does not stop by itself when
  // every run() has returned). True if all ended cleanly.
  bool wait() { return launch_->wait(); }

  // Stops every node process (SIGTERM, then SIGKILL after the notice) and
  // waits for them. True if all ended cleanly.
  bool stop() {
    launch_->request_stop();
    nodes_->close();
    return launch_->wait();
  }

  // What failed, one node per line with its last output; empty if nothing.
  std::string summary() const { return launch_->summary(); }
  std::vector<pid_t> pids() const { return launch_->pids(); }
  const std::string& secret() const { return launch_->secret(); }
  const std::string& run_dir() const { return launch_->run_dir(); }

 private:
  const program* graph_;
  std::unique_ptr<detail::process_launch> launch_;
  std::shared_ptr<detail::rendezvous_directory> nodes_;
};

}  // namespace lp
