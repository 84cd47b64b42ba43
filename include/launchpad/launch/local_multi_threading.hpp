#pragma once

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <iostream>
#include <launchpad/context.hpp>
#include <launchpad/detail/in_process.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>
#include <thread>

namespace lp {

// Every node a thread of one process, each serving on its own loopback HTTP
// port. Ctrl+C (SIGINT) or SIGTERM stops the program gracefully; a second
// one exits at once.
struct local_multi_threading {
  static constexpr std::string_view flag = "local_mt";
};

namespace detail {

// Takes SIGINT and SIGTERM away from every thread started while it lives and
// turns them into lp::stop(). Blocking them before any node thread starts is
// what makes this work: the threads inherit the mask, and one thread waits.
class stop_on_signals {
 public:
  stop_on_signals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
    watcher_ = std::thread([this] { watch(); });
  }
  stop_on_signals(const stop_on_signals&) = delete;
  stop_on_signals& operator=(const stop_on_signals&) = delete;
  ~stop_on_signals() {
    done_ = true;
    watcher_.join();
    timespec none{0, 0};
    while (sigtimedwait(&signals_, nullptr, &none) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  void watch() {
    timespec tick{0, 50'000'000};
    int received = 0;
    while (!done_) {
      int signal = sigtimedwait(&signals_, nullptr, &tick);
      if (signal <= 0) continue;
      if (++received == 1) {
        std::cerr << "[lp] " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                  << ": stopping the program (again to exit at once)" << std::endl;
        lp::stop();
      } else {
        std::cerr << "[lp] second signal: exiting at once" << std::endl;
        std::_Exit(128 + signal);
      }
    }
  }

  sigset_t signals_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

// Runs the program to its end in this process; returns the exit status.
inline int run_in_process(const program& graph, std::string_view policy, bool handle_signals) {
  std::unique_ptr<stop_on_signals> signals;
  if (handle_signals) signals = std::make_unique<stop_on_signals>();
  try {
    in_process_launch launch(graph, std::string(policy));
    launch.state().wait_for_stop();
    launch.shutdown();
    if (auto failure = launch.state().failure()) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        std::cerr << "[lp] node " << launch.state().failed_node() << " failed: " << e.what()
                  << std::endl;
      } catch (...) {
        std::cerr << "[lp] node " << launch.state().failed_node()
                  << " failed with an exception not derived from std::exception" << std::endl;
      }
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace detail
}  // namespace lp
