#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <launchpad/error.hpp>
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

// Turns SIGINT and SIGTERM into lp::stop() while it lives. The handler only
// writes the signal's number to a pipe (about all a signal handler may
// safely do); a thread of its own reads the pipe and stops the program. A
// second signal exits at once. The previous handlers come back afterwards.
class stop_on_signals {
 public:
  stop_on_signals() {
    if (::pipe(pipe_) != 0) throw usage_error("cannot create a pipe for signal handling");
    write_end() = pipe_[1];
    struct sigaction action {};
    action.sa_handler = [](int signal) {
      char byte = static_cast<char>(signal);
      [[maybe_unused]] auto written = ::write(write_end(), &byte, 1);
    };
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
    watcher_ = std::thread([this] { watch(); });
  }
  stop_on_signals(const stop_on_signals&) = delete;
  stop_on_signals& operator=(const stop_on_signals&) = delete;
  ~stop_on_signals() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    char done = 0;
    [[maybe_unused]] auto written = ::write(pipe_[1], &done, 1);
    watcher_.join();
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }

 private:
  static int& write_end() {
    static int fd = -1;
    return fd;
  }

  void watch() {
    int received = 0;
    char signal = 0;
    for (;;) {
      auto got = ::read(pipe_[0], &signal, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got != 1 || signal == 0) return;
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

  int pipe_[2] = {-1, -1};
  struct sigaction previous_int_ {}, previous_term_ {};
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
