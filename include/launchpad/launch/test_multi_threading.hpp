#pragma once

#include <chrono>
#include <exception>
#include <launchpad/client.hpp>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/detail/run/node_host.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

// For tests: every node a thread of the test process, each serving on its
// own loopback HTTP port, as in local_multi_threading. No signal handlers.
//
//   auto running = lp::launch<lp::test_multi_threading>(p);
//   CHECK(running.client(counter).get() == 0);
//   running.wait();  // rethrows the first exception a node threw
struct test_multi_threading {
  static constexpr std::string_view flag = "test_mt";
  // From the command line (--lp_launch=test_mt): like local_mt, without
  // signal handlers.
  static int run(const program& graph, const detail::launch_flags& flags) {
    return detail::run_in_process(graph, flag, /*handle_signals=*/false, flags);
  }
};

// A program launched by a test. Destroying it stops the program and waits
// until every thread and server it started is gone.
class test_controller {
 public:
  // `flags` are --lp_ flags, as on a command line: --lp_max_body_mb,
  // --lp_insecure, --lp_direct_calls (clients call the nodes without HTTP).
  explicit test_controller(const program& graph, const std::vector<std::string>& flags = {})
      : graph_(&graph) {
    std::vector<std::string> words{"test"};
    words.insert(words.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    auto parsed = detail::parse_flags(static_cast<int>(argv.size()), argv.data());
    detail::host_options options;
    options.policy = test_multi_threading::flag;
    options.secret = parsed.insecure ? "" : detail::make_secret();
    options.max_body_bytes = parsed.max_body_mb << 20;
    options.direct_calls = parsed.direct_calls;
    options.stop_when_runs_finish = false;
    launch_ = std::make_unique<detail::node_host>(graph, std::move(options));
  }

  // A client for any node of the program.
  template <class T>
  lp::client<T> client(const handle<T>& node) {
    if (node.owner() != graph_)
      throw graph_error("test_controller::client: the handle to '" + node.label() +
                        "' belongs to another program");
    return lp::client<T>(launch_->connect(node.label()));
  }

  // Label -> URL of every node, for raw HTTP or curl.
  std::map<std::string, std::string> urls() const { return launch_->urls(); }

  // The bearer token every request to the nodes must carry
  // (`Authorization: Bearer <secret>`).
  const std::string& secret() const { return launch_->secret(); }

  // Waits until the run() of every node named (labels or group names) has
  // returned; the other nodes go on serving. False if the program stopped
  // first (then wait() tells why).
  bool wait(const std::vector<std::string>& names) { return launch_->wait_finished(names); }

  // Waits until the program stops: a node called lp::stop() or threw, or
  // stop() was called. (Under a test controller a program does not stop by
  // itself when every run() has returned: the test may still want to look.)
  // Then shuts it down and rethrows the first exception a node threw.
  void wait() {
    launch_->state().wait_for_stop();
    finish();
  }

  // As wait(), but gives up after `timeout`; returns whether it stopped.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    if (!launch_->state().wait_for_stop(
            std::chrono::duration_cast<std::chrono::nanoseconds>(timeout)))
      return false;
    finish();
    return true;
  }

  // Stops the program and waits until it is shut down. Does not rethrow.
  void stop() { launch_->shutdown(); }

  bool stop_requested() const { return launch_->state().stop_requested(); }

 private:
  void finish() {
    launch_->shutdown();
    if (auto failure = launch_->state().failure()) std::rethrow_exception(failure);
  }

  const program* graph_;
  std::unique_ptr<detail::node_host> launch_;
};

}  // namespace lp
