#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <launchpad/error.hpp>
#include <thread>

namespace lp::detail {

// Handles SIGINT and SIGTERM while it lives: the first calls `first` (stop
// gracefully), a second one `second` (end at once). The handler only writes
// the signal's number to a pipe, about all a signal handler may safely do;
// a thread of its own reads the pipe and acts. The previous handlers come
// back afterwards.
class stop_on_signals {
 public:
  using action = std::function<void(int signal)>;

  stop_on_signals(action first, action second)
      : first_(std::move(first)), second_(std::move(second)) {
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
      if (++received == 1) first_(signal);
      else second_(signal);
    }
  }

  action first_, second_;
  int pipe_[2] = {-1, -1};
  struct sigaction previous_int_ {}, previous_term_ {};
  std::thread watcher_;
};

}  // namespace lp::detail
