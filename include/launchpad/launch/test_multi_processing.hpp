#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <launchpad/client.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

namespace detail {
class process_launch;
class rendezvous_directory;
class channel;
}  // namespace detail

class process_controller;

// What a test may choose about a program it launches as processes.
struct process_test_options {
  std::string executable;              // the nodes' program (required)
  std::vector<std::string> arguments;  // its arguments after argv[0]
  std::chrono::seconds termination_notice{10};
  std::string terminal = "current";  // or "files", "tmux"
  bool insecure = false;             // nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;     // the largest request body a node accepts
};

// For tests of a program as processes, like local_multi_processing. The test
// process is the launcher; each node runs in a process of `executable`, a
// program whose main() builds the same graph and calls lp::launch (usually
// the program's own binary; build the graph in a function both share).
// It runs only under a test: from main(), use local_multi_processing.
//
//   auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
//   running.wait({"producers"});
//   CHECK(running.client(counter).get() == 4000);
struct test_multi_processing {
  static constexpr std::string_view flag = "test_mp";
  static constexpr bool from_command_line = false;
  using transport = http_transport;
  using controller = process_controller;
  using options = process_test_options;
};

// A program launched as processes by a test. It has test_controller's
// members with the same meanings, and pids(). Destroying it stops the
// program and waits until every process it started is gone.
class process_controller {
 public:
  LP_API process_controller(const program& graph, const process_test_options& options,
                            transport_kind transport = transport_kind::http);
  LP_API process_controller(process_controller&&) noexcept;
  LP_API process_controller& operator=(process_controller&&) noexcept;
  LP_API ~process_controller();

  // A client for any node; calls wait for a node that does not serve yet.
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("process_controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    return detail::client_access::make<T>(connect(node.label()));
  }

  // Label -> URL of every node serving now, for raw HTTP or curl.
  LP_API std::map<std::string, std::string> urls() const;

  // The bearer token every request to the nodes must carry; empty for an
  // insecure launch.
  LP_API const std::string& secret() const;

  // The launch's run directory (its secret file, its logs).
  LP_API const std::string& run_dir() const;

  // Waits until the run() of every node named (labels or group names) has
  // returned. False if the program stopped first.
  LP_API bool wait(const std::vector<std::string>& names);

  // Waits until every process has ended: a node called lp::stop() or failed,
  // or stop() was called (a program under test does not stop by itself when
  // every run() has returned). Throws lp::node_failure, whose message is
  // summary(), if a node failed. A node that failed and was restarted, as its
  // group allows, is not a failure of the program.
  LP_API void wait();

  // As wait(), but gives up after `timeout`; returns whether it stopped.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until_stopped(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }

  // Stops every node process (SIGTERM, then SIGKILL after the notice) and
  // waits for them. True if none failed; summary() says what did.
  LP_API bool stop();

  // What failed, one process per line with its last output; empty if
  // nothing did.
  LP_API std::string summary() const;

  // The ids of the node processes running now (one per node, or per
  // colocated group).
  LP_API std::vector<pid_t> pids() const;

 private:
  LP_API std::shared_ptr<detail::channel> connect(const std::string& label);
  LP_API bool wait_until_stopped(std::chrono::nanoseconds timeout);

  const program* graph_;
  std::unique_ptr<detail::process_launch> launch_;
  std::shared_ptr<detail::rendezvous_directory> nodes_;
};

}  // namespace lp
