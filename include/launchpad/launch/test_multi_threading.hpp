#pragma once

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
class node_host;
class channel;
}  // namespace detail

class test_controller;

// What a test may choose about a program it launches as threads.
struct test_options {
  bool insecure = false;          // nodes take calls without the launch's secret
  std::size_t max_body_mb = 256;  // the largest request body a node accepts
  // As --lp_header_timeout_secs, --lp_min_rate_kib_per_sec and
  // --lp_max_connections (docs/protocol.md, "Limits").
  int header_timeout_secs = 10;
  std::size_t min_rate_kib_per_sec = 64;
  std::size_t max_connections = 2048;
};

// For tests: every node a thread of the test process, each serving on its
// own loopback HTTP port, as in local_multi_threading. No signal handlers.
//
//   auto running = lp::launch<lp::test_multi_threading>(p);
//   CHECK(running.client(counter).get() == 0);
//   running.wait();  // throws lp::node_failure if a node failed
//
// From a command line (--lp_launch=test_mt) it runs like local_mt, without
// signal handlers.
struct test_multi_threading {
  static constexpr std::string_view flag = "test_mt";
  static constexpr bool from_command_line = true;
  using transport = http_transport;
  using controller = test_controller;
  using options = test_options;
};

// A program launched by a test, in this process. test_controller and
// process_controller have the same members with the same meanings; only
// how the nodes run differs. Destroying it stops the program and waits until
// every thread and server it started is gone.
class test_controller {
 public:
  LP_API explicit test_controller(const program& graph, const test_options& options = {},
                                  transport_kind transport = transport_kind::http);
  LP_API test_controller(test_controller&&) noexcept;
  LP_API test_controller& operator=(test_controller&&) noexcept;
  LP_API ~test_controller();

  // A client for any node of the program.
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("test_controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    return detail::client_access::make<T>(connect(node.label()));
  }

  // Label -> URL of every node, for raw HTTP or curl.
  LP_API std::map<std::string, std::string> urls() const;

  // The bearer token every request to the nodes must carry
  // (`Authorization: Bearer <secret>`); empty for an insecure launch.
  LP_API const std::string& secret() const;

  // Waits until the run() of every node named (labels or group names) has
  // returned; the other nodes go on serving. False if the program stopped
  // first (then wait() tells why).
  LP_API bool wait(const std::vector<std::string>& names);

  // Waits until the program stops: a node called lp::stop() or failed, or
  // stop() was called. (Under a test controller a program does not stop by
  // itself when every run() has returned: the test may still want to look.)
  // Then shuts it down; throws lp::node_failure, holding the node's own
  // exception (std::rethrow_if_nested), if a node failed.
  LP_API void wait();

  // As wait(), but gives up after `timeout`; returns whether it stopped.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until_stopped(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }

  // Stops the program and waits until it is shut down. True if no node
  // failed; summary() says what did. Never throws a node's failure.
  LP_API bool stop();

  // What failed, one node per line; empty if nothing did.
  LP_API std::string summary() const;

  LP_API bool stop_requested() const;

 private:
  LP_API std::shared_ptr<detail::channel> connect(const std::string& label);
  LP_API bool wait_until_stopped(std::chrono::nanoseconds timeout);
  LP_API void finish();

  const program* graph_;
  std::unique_ptr<detail::node_host> host_;
};

}  // namespace lp
