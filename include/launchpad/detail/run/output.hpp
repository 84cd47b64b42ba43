#pragma once

// The lines node processes print, as the launcher shows them.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <launchpad/error.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

inline void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// "[label] ", in a colour of its own (by `nth`, the order labels come in)
// on a terminal.
inline std::string line_prefix(const std::string& label, std::size_t nth, bool colour) {
  std::string prefix = "[" + label + "] ";
  if (!colour) return prefix;
  return "\033[1;3" + std::to_string(nth % 6 + 1) + "m" + prefix + "\033[0m";
}

// A failed node's last lines, quoted under its failure in the launcher's
// summary; empty for none.
inline std::string quoted_last_lines(const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string text = "[lp]   its last lines:\n";
  for (const auto& line : lines) text += "[lp]   | " + line + "\n";
  return text;
}

// Reads every node's stdout and stderr through pipes and writes each whole
// line to the launcher's own stdout or stderr, behind a "[label] " prefix
// (coloured on a terminal). Lines are never cut into one another, and the
// last lines of each node are kept for the failure summary.
class output_pump {
 public:
  static constexpr std::size_t kept_lines = 20;

  output_pump() {
    if (::pipe2(wake_, O_CLOEXEC) != 0) throw launch_error("cannot create a pipe");
    colour_ = ::isatty(1) && ::isatty(2);
    thread_ = std::thread([this] { pump(); });
  }
  output_pump(const output_pump&) = delete;
  output_pump& operator=(const output_pump&) = delete;
  ~output_pump() { close(); }

  // A pipe for the node's stream `target` (1 or 2); the child gets the
  // returned write end, which the launcher closes once the child has it.
  int open(const std::string& label, int target) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) throw launch_error("cannot create a pipe");
    {
      std::lock_guard lock(mutex_);
      auto nth = colours_.emplace(label, colours_.size()).first->second;
      streams_.push_back({ends[0], target, label, line_prefix(label, nth, colour_), {}});
      ++open_[label];
    }
    wake();
    return ends[1];
  }

  // The last lines a node printed, oldest first. For a node that has just
  // died, waits (up to `drain`) until its pipes are at their end, so that
  // its last words, still in flight, are among them.
  std::vector<std::string> last_lines(const std::string& label,
                                      std::chrono::milliseconds drain = std::chrono::milliseconds(0)) {
    std::unique_lock lock(mutex_);
    drained_.wait_for(lock, drain, [&] { return open_[label] == 0; });
    auto& lines = recent_[label];
    return {lines.begin(), lines.end()};
  }

  // Waits until every pipe is at its end (all writers gone), then stops; a
  // pipe some stray grandchild still holds open is given up after 2 s.
  void close() {
    if (!thread_.joinable()) return;
    closing_ = true;
    wake();
    thread_.join();
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

 private:
  struct stream {
    int fd;
    int target;
    std::string label, prefix, partial;
  };

  void wake() {
    char byte = 1;
    [[maybe_unused]] auto n = ::write(wake_[1], &byte, 1);
  }

  void pump() {
    std::vector<char> buffer(65536);
    std::chrono::steady_clock::time_point give_up{};
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}};
      {
        std::lock_guard lock(mutex_);
        if (closing_ && give_up == std::chrono::steady_clock::time_point{})
          give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        if (closing_ && (streams_.empty() || std::chrono::steady_clock::now() > give_up)) {
          for (auto& s : streams_) {
            emit(s, true);
            ::close(s.fd);
          }
          streams_.clear();
          return;
        }
        for (const auto& s : streams_) fds.push_back({s.fd, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), closing_ ? 100 : -1) < 0 && errno != EINTR) return;
      if (fds[0].revents) {
        char drain[64];
        [[maybe_unused]] auto n = ::read(wake_[0], drain, sizeof drain);
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto n = ::read(fds[i].fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        std::lock_guard lock(mutex_);
        for (auto it = streams_.begin(); it != streams_.end(); ++it) {
          if (it->fd != fds[i].fd) continue;
          if (n > 0) {
            it->partial.append(buffer.data(), static_cast<std::size_t>(n));
            emit(*it, false);
          } else {
            emit(*it, true);
            ::close(it->fd);
            if (--open_[it->label] == 0) drained_.notify_all();
            streams_.erase(it);
          }
          break;
        }
      }
    }
  }

  // Writes the complete lines of s (and, at its end, what is left).
  void emit(stream& s, bool at_end) {
    std::size_t start = 0;
    std::string out;
    for (auto newline = s.partial.find('\n'); newline != std::string::npos;
         newline = s.partial.find('\n', start)) {
      add(s, s.partial.substr(start, newline - start), out);
      start = newline + 1;
    }
    s.partial.erase(0, start);
    if (at_end && !s.partial.empty()) {
      add(s, s.partial, out);
      s.partial.clear();
    }
    if (!out.empty()) write_all(s.target, out);
  }

  void add(const stream& s, const std::string& line, std::string& out) {
    out += s.prefix + line + "\n";
    auto& lines = recent_[s.label];
    lines.push_back(line);
    if (lines.size() > kept_lines) lines.pop_front();
  }

  int wake_[2] = {-1, -1};
  bool colour_ = false;
  std::atomic<bool> closing_{false};
  std::mutex mutex_;
  std::vector<stream> streams_;
  std::map<std::string, std::size_t> colours_;
  std::map<std::string, std::deque<std::string>> recent_;
  std::map<std::string, int> open_;  // pipes not at their end, by label
  std::condition_variable drained_;
  std::thread thread_;
};

}  // namespace lp::detail
