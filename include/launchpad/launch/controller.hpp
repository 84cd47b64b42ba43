#pragma once

/// @file
/// lp::controller, what a test holds of a program it launched.

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

/// A program launched by a test, as `lp::launch<P>(p, options)` returns it
/// for either test policy (lp::test_multi_threading,
/// lp::test_multi_processing).
///
/// ```cpp
/// auto running = lp::launch<lp::test_multi_threading>(p);
/// CHECK(running.wait({"producers"}));  // their run() returned
/// CHECK(running.client(counter).get() == 4000);
/// CHECK(running.stop());  // true: no node failed
/// ```
///
/// Its members mean the same whichever policy runs the nodes; only how the
/// nodes run differs. A program under a controller does not stop by itself
/// when every run() has returned, so that the test can still look at it.
/// Destroying the controller stops the program and waits until every thread,
/// server and process it started is gone (docs/launching.md,
/// "test_multi_threading").
class controller {
 public:
  /// Launches every node as a thread of this process (lp::test_multi_threading);
  /// lp::launch calls it.
  /// @param graph the program; it must outlive the controller
  /// @param options the test's choices
  /// @param transport how nodes of this process call each other
  LP_API controller(const program& graph, const test_options& options,
                    transport_kind transport = transport_kind::http);
  /// Launches every node, or colocated group, as a process
  /// (lp::test_multi_processing); lp::launch calls it.
  /// @param graph the program; it must outlive the controller
  /// @param options the test's choices; `executable` is required
  /// @param transport how nodes of one process call each other
  LP_API controller(const program& graph, const process_test_options& options,
                    transport_kind transport = transport_kind::http);
  /// Takes over the launch; the moved-from controller holds none.
  LP_API controller(controller&&) noexcept;
  /// Takes over the other's launch; the moved-from controller holds none.
  LP_API controller& operator=(controller&&) noexcept;
  /// Stops the program, as stop() does, and waits until everything it
  /// started is gone.
  LP_API ~controller();

  /// A client for any node of the program; its calls wait for a node that
  /// does not serve yet.
  ///
  /// ```cpp
  /// CHECK(running.client(counter).get() == 4000);
  /// ```
  ///
  /// @throws lp::graph_error for a handle of another program, or an empty one
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    return detail::client_access::make<T>(connect(node.label()));
  }

  /// Label to URL of every node serving now, for raw HTTP or curl.
  LP_API std::map<std::string, std::string> urls() const;

  /// The bearer token every request to the nodes must carry
  /// (`Authorization: Bearer <secret>`); empty for an insecure launch.
  LP_API const std::string& secret() const;

  /// The launch's run directory (its secret file, its logs, `nodes`); empty
  /// for a launch that has none (test_multi_threading).
  LP_API const std::string& run_dir() const;

  /// The ids of the processes that run nodes now: this process under
  /// test_multi_threading; one per node, or per colocated group, under
  /// test_multi_processing.
  LP_API std::vector<pid_t> pids() const;

  /// Waits until the run() of every node named has returned; the other
  /// nodes go on serving.
  /// @param names nodes' labels or groups' names
  /// @return true once they have; false if the program stopped first (then
  /// wait() tells why)
  /// @throws lp::graph_error for a name that is no node or group of the
  /// program
  LP_API bool wait(const std::vector<std::string>& names);

  /// Waits until the program stops (a node called lp::stop() or failed, or
  /// stop() was called), and shuts it down.
  ///
  /// A node that failed and was restarted, as its group allows, is no
  /// failure of the program.
  /// @throws lp::node_failure, whose message is summary(), if a node failed;
  /// under test_multi_threading it holds the node's own exception
  /// (std::rethrow_if_nested)
  LP_API void wait();

  /// As wait(), but gives up after `timeout`.
  /// @return whether the program stopped
  /// @throws lp::node_failure as wait() does
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until_stopped(
        std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }

  /// Stops the program and waits until it is shut down (node processes get
  /// SIGTERM, then SIGKILL after the termination notice). Never throws a
  /// node's failure.
  /// @return true if no node failed; summary() says what did
  LP_API bool stop();

  /// Whether the program is stopping or has stopped: a node called
  /// lp::stop() or failed, or stop() was called.
  LP_API bool stop_requested() const;

  /// What failed, one node per line (with a process's last output); empty if
  /// nothing did.
  LP_API std::string summary() const;

 private:
  LP_API std::shared_ptr<detail::channel> connect(const std::string& label);
  LP_API bool wait_until_stopped(std::chrono::nanoseconds timeout);

  const program* graph_;
  std::unique_ptr<detail::controlled_launch> launch_;
};

}  // namespace lp
