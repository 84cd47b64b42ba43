#pragma once

// What a test holds of a program it launched: lp::launch<P>(p, options)
// returns an lp::controller for either test policy (test_multi_threading,
// test_multi_processing). Its members mean the same whichever runs the
// nodes; only how the nodes run differs.

#include <sys/types.h>

#include <chrono>
#include <launchpad/client.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lp {

namespace detail {
class channel;
class controlled_launch;
}  // namespace detail

struct test_options;
struct process_test_options;

// A program launched by a test. Destroying it stops the program and waits
// until every thread, server and process it started is gone.
class controller {
 public:
  // test_multi_threading: every node a thread of this process.
  LP_API controller(const program& graph, const test_options& options,
                    transport_kind transport = transport_kind::http);
  // test_multi_processing: every node (or colocated group) a process.
  LP_API controller(const program& graph, const process_test_options& options,
                    transport_kind transport = transport_kind::http);
  LP_API controller(controller&&) noexcept;
  LP_API controller& operator=(controller&&) noexcept;
  LP_API ~controller();

  // A client for any node of the program; its calls wait for a node that
  // does not serve yet.
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    return detail::client_access::make<T>(connect(node.label()));
  }

  // Label -> URL of every node serving now, for raw HTTP or curl.
  LP_API std::map<std::string, std::string> urls() const;

  // The bearer token every request to the nodes must carry
  // (`Authorization: Bearer <secret>`); empty for an insecure launch.
  LP_API const std::string& secret() const;

  // The launch's run directory (its secret file, its logs, `nodes`); empty
  // for a launch that has none (test_multi_threading).
  LP_API const std::string& run_dir() const;

  // The ids of the processes that run nodes now: this process under
  // test_multi_threading; one per node, or per colocated group, under
  // test_multi_processing.
  LP_API std::vector<pid_t> pids() const;

  // Waits until the run() of every node named (labels or group names) has
  // returned; the other nodes go on serving. False if the program stopped
  // first (then wait() tells why).
  LP_API bool wait(const std::vector<std::string>& names);

  // Waits until the program stops: a node called lp::stop() or failed, or
  // stop() was called. (Under a test a program does not stop by itself when
  // every run() has returned: the test may still want to look.) Throws
  // lp::node_failure, whose message is summary(), if a node failed; under
  // test_multi_threading it holds the node's own exception
  // (std::rethrow_if_nested). A node that failed and was restarted, as its
  // group allows, is no failure of the program.
  LP_API void wait();

  // As wait(), but gives up after `timeout`; returns whether it stopped.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until_stopped(
        std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }

  // Stops the program and waits until it is shut down (node processes get
  // SIGTERM, then SIGKILL after the termination notice). True if no node
  // failed; summary() says what did. Never throws a node's failure.
  LP_API bool stop();

  // Whether the program is stopping or has stopped: a node called
  // lp::stop() or failed, or stop() was called.
  LP_API bool stop_requested() const;

  // What failed, one node per line (with a process's last output); empty if
  // nothing did.
  LP_API std::string summary() const;

 private:
  LP_API std::shared_ptr<detail::channel> connect(const std::string& label);
  LP_API bool wait_until_stopped(std::chrono::nanoseconds timeout);

  const program* graph_;
  std::unique_ptr<detail::controlled_launch> launch_;
};

}  // namespace lp
