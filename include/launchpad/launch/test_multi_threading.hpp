#pragma once

#include <chrono>
#include <exception>
#include <launchpad/client.hpp>
#include <launchpad/detail/in_process.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace lp {

// For tests: every node a thread of the test process, each serving on its
// own loopback HTTP port, as in local_multi_threading. No signal handlers.
//
//   auto running = lp::launch<lp::test_multi_threading>(p);
//   CHECK(running.client(counter).get() == 0);
//   running.wait();  // rethrows the first exception a node threw
struct test_multi_threading {
  static constexpr std::string_view flag = "test_mt";
};

// A program launched by a test. Destroying it stops the program and waits
// until every thread and server it started is gone.
class test_controller {
 public:
  explicit test_controller(const program& graph)
      : launch_(std::make_unique<detail::in_process_launch>(graph,
                                                            std::string(test_multi_threading::flag))),
        graph_(&graph) {}

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

  // Waits until the program stops: a node called lp::stop(), every run()
  // returned, a node threw, or stop() was called. Then shuts it down and
  // rethrows the first exception a node threw.
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

  std::unique_ptr<detail::in_process_launch> launch_;
  const program* graph_;
};

}  // namespace lp
