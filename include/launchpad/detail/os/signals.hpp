#pragma once

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <launchpad/error.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace lp::detail {

// What the handler learns of a signal. Smaller than PIPE_BUF, so each write
// is whole, and so is each read.
struct received_signal {
  int signal;  // 0: the reader ends
  int code;    // si_code
  pid_t sender;
  std::int64_t at_ns;  // CLOCK_MONOTONIC
};

// Signals belong to the process, not to a launch: one handler for SIGINT and
// SIGTERM, one pipe, one thread that reads it, shared by every
// stop_on_signals alive, so that two launches in one process (one after the
// other, or one started from a node of the other) each hear every signal.
// The handler goes in when the first stop_on_signals comes, and the
// previous handlers come back when the last one goes. A static: a signal
// handler can reach nothing else.
class signal_hub {
 public:
  using listener = std::function<void(const received_signal&)>;

  static signal_hub& get() {
    static signal_hub hub;
    return hub;
  }

  // Hears every SIGINT and SIGTERM until leave(the id).
  std::uint64_t join(listener hear) {
    std::lock_guard lock(mutex_);
    if (listeners_.empty()) start();
    listeners_.emplace(++last_id_, std::make_shared<entry>(std::move(hear)));
    return last_id_;
  }

  // Once this returns, the listener is not running and never runs again.
  void leave(std::uint64_t id) {
    std::shared_ptr<entry> gone;
    std::optional<reading> ended;
    {
      std::lock_guard lock(mutex_);
      gone = std::move(listeners_.at(id));
      listeners_.erase(id);
      if (listeners_.empty()) ended = stop();
    }
    {
      std::lock_guard running(gone->running);
      gone->hear = nullptr;
    }
    if (!ended) return;
    if (ended->reader.get_id() == std::this_thread::get_id()) {
      ended->reader.detach();  // a listener that leaves from its own signal
      return;
    }
    ended->reader.join();
    ::close(ended->pipe[0]);
    ::close(ended->pipe[1]);
  }

 private:
  struct entry {
    explicit entry(listener hear) : hear(std::move(hear)) {}
    std::recursive_mutex running;  // recursive: a listener may leave from its own call
    listener hear;
  };
  struct reading {
    int pipe[2] = {-1, -1};
    std::thread reader;
  };

  void start() {
    if (::pipe(now_.pipe) != 0)
      throw launch_error("cannot create a pipe for signal handling");
    write_end_.store(now_.pipe[1]);
    struct sigaction action {};
    action.sa_sigaction = [](int signal, siginfo_t* info, void*) {
      int saved_errno = errno;  // the interrupted code may be about to read it
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      received_signal got{signal, info->si_code, info->si_pid,
                          std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec};
      [[maybe_unused]] auto written = ::write(write_end_.load(), &got, sizeof got);
      errno = saved_errno;
    };
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
    now_.reader = std::thread([this, read_end = now_.pipe[0]] { read_from(read_end); });
  }

  // Under mutex_: the handlers go, and the reader is told to end.
  reading stop() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    received_signal done{};
    [[maybe_unused]] auto written = ::write(now_.pipe[1], &done, sizeof done);
    write_end_.store(-1);
    return std::exchange(now_, {});
  }

  void read_from(int read_end) {
    for (received_signal got{};;) {
      auto bytes = ::read(read_end, &got, sizeof got);
      if (bytes < 0 && errno == EINTR) continue;
      if (bytes != static_cast<ssize_t>(sizeof got) || got.signal == 0) return;
      std::vector<std::shared_ptr<entry>> everyone;
      {
        std::lock_guard lock(mutex_);
        for (auto& [id, one] : listeners_) everyone.push_back(one);
      }
      for (auto& one : everyone) {
        std::lock_guard running(one->running);
        if (one->hear) one->hear(got);
      }
    }
  }

  static inline std::atomic<int> write_end_{-1};  // what the handler writes to
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<entry>> listeners_;
  std::uint64_t last_id_ = 0;
  reading now_;
  struct sigaction previous_int_ {
  }, previous_term_{};
};

// Handles SIGINT and SIGTERM while it lives: the first calls `first` (stop
// gracefully), each later request `again` (end at once). Its actions run on
// the signal hub's thread, never in the handler.
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
  explicit stop_on_signals(traced_action first)
      : stop_on_signals(own{}, std::move(first), {}) {}

  stop_on_signals(const stop_on_signals&) = delete;
  stop_on_signals& operator=(const stop_on_signals&) = delete;
  ~stop_on_signals() { signal_hub::get().leave(id_); }

 private:
  struct own {};

  stop_on_signals(own, traced_action first, traced_action again)
      : first_(std::move(first)),
        again_(std::move(again)),
        id_(signal_hub::get().join([this](const received_signal& got) { hear(got); })) {}

  // As the kernel's SI_FROMUSER: kill(2), sigqueue(3), tgkill(2).
  static bool by_process(const received_signal& r) { return r.code <= 0; }

  static bool repeats(const received_signal& later, const received_signal& request) {
    auto window = std::chrono::nanoseconds(repeat_window).count();
    return later.signal == request.signal && by_process(later) &&
           later.at_ns - request.at_ns < window &&
           (!by_process(request) || later.sender == request.sender);
  }

  // On the hub's thread only.
  void hear(const received_signal& got) {
    if (request_ && repeats(got, *request_)) return;
    bool first = !request_;
    request_ = got;
    origin from{got.signal, by_process(got), got.sender};
    if (first)
      first_(from);
    else if (again_)
      again_(from);
  }

  traced_action first_, again_;
  std::optional<received_signal> request_;
  std::uint64_t id_;  // last: joins once the rest is ready
};

}  // namespace lp::detail
