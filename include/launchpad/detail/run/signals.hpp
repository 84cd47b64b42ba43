#pragma once

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <launchpad/error.hpp>
#include <optional>
#include <thread>

namespace lp::detail {

// Handles SIGINT and SIGTERM while it lives: the first calls `first` (stop
// gracefully), each later request `again` (end at once). The handler only
// writes the signal, its sender and the time to a pipe, about all a signal
// handler may safely do; a thread of its own reads the pipe and acts. The
// previous handlers come back afterwards.
//
// One request may reach a process more than once: GNU timeout signals its
// child, then the child's whole process group; a supervisor that signals a
// group or a cgroup may reach it twice; a wrapper (timeout again) that a
// terminal's Ctrl+C reached passes it on. So a later signal is the request
// again, and changes nothing, when it is the same signal, sent by a process
// within `repeat_window` of the request, and by the request's own sender or
// after a Ctrl+C. A Ctrl+C (sent by the kernel, not by a process), a signal
// from another sender, or the same sender's after the window is a request of
// its own: a person who presses Ctrl+C twice means it.
class stop_on_signals {
 public:
  struct origin {
    int signal = 0;
    bool by_process = false;  // kill(2) and kin; false: the kernel (a terminal's Ctrl+C)
    pid_t sender = 0;         // 0 if the sender is outside this PID namespace
  };
  using action = std::function<void(int signal)>;
  using traced_action = std::function<void(const origin&)>;

  static constexpr std::chrono::milliseconds repeat_window{1000};

  stop_on_signals(action first, action again)
      : stop_on_signals(
            own{}, [first = std::move(first)](const origin& from) { first(from.signal); },
            [again = std::move(again)](const origin& from) { again(from.signal); }) {}

  // Acts on the first signal only, and tells where it came from.
  explicit stop_on_signals(traced_action first) : stop_on_signals(own{}, std::move(first), {}) {}

  stop_on_signals(const stop_on_signals&) = delete;
  stop_on_signals& operator=(const stop_on_signals&) = delete;
  ~stop_on_signals() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    received done{};
    [[maybe_unused]] auto written = ::write(pipe_[1], &done, sizeof done);
    watcher_.join();
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }

 private:
  struct own {};

  // What the handler learns of a signal. Smaller than PIPE_BUF, so each
  // write is whole, and so is each read.
  struct received {
    int signal;  // 0: the watcher ends
    int code;    // si_code
    pid_t sender;
    std::int64_t at_ns;  // CLOCK_MONOTONIC
  };

  stop_on_signals(own, traced_action first, traced_action again)
      : first_(std::move(first)), again_(std::move(again)) {
    if (::pipe(pipe_) != 0) throw usage_error("cannot create a pipe for signal handling");
    write_end() = pipe_[1];
    struct sigaction action {};
    action.sa_sigaction = [](int signal, siginfo_t* info, void*) {
      int saved_errno = errno;  // the interrupted code may be about to read it
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      received got{signal, info->si_code, info->si_pid,
                   std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec};
      [[maybe_unused]] auto written = ::write(write_end(), &got, sizeof got);
      errno = saved_errno;
    };
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
    watcher_ = std::thread([this] { watch(); });
  }

  static int& write_end() {
    static int fd = -1;
    return fd;
  }

  // As the kernel's SI_FROMUSER: kill(2), sigqueue(3), tgkill(2).
  static bool by_process(const received& r) { return r.code <= 0; }

  static bool repeats(const received& later, const received& request) {
    auto window = std::chrono::nanoseconds(repeat_window).count();
    return later.signal == request.signal && by_process(later) &&
           later.at_ns - request.at_ns < window &&
           (!by_process(request) || later.sender == request.sender);
  }

  void watch() {
    std::optional<received> request;
    for (received got{};;) {
      auto bytes = ::read(pipe_[0], &got, sizeof got);
      if (bytes < 0 && errno == EINTR) continue;
      if (bytes != static_cast<ssize_t>(sizeof got) || got.signal == 0) return;
      if (request && repeats(got, *request)) continue;
      bool first = !request;
      request = got;
      origin from{got.signal, by_process(got), got.sender};
      if (first) first_(from);
      else if (again_) again_(from);
    }
  }

  traced_action first_, again_;
  int pipe_[2] = {-1, -1};
  struct sigaction previous_int_ {}, previous_term_ {};
  std::thread watcher_;
};

}  // namespace lp::detail
