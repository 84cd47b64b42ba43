#pragma once

// The lines node processes print, as the launcher shows them.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <launchpad/error.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lp::detail {

// Calls `take` with each line read from `fd` until its end (the last one
// also without its newline), as a child's output arrives.
inline void each_line(int fd, const std::function<void(std::string&&)>& take) {
  std::string pending;
  char chunk[4096];
  for (;;) {
    auto n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(chunk, static_cast<std::size_t>(n));
    for (auto end = pending.find('\n'); end != std::string::npos;
         end = pending.find('\n')) {
      take(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
  if (!pending.empty()) take(std::move(pending));
}

inline void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Writes `text` to a new file at `path` that only its owner may read (a
// secret, a key, a manifest that holds them); throws if the file is there.
inline void write_private_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw launch_error("cannot write " + path + ": " + std::strerror(errno));
  write_all(fd, text);
  ::close(fd);
}

// How launchers show their nodes' output: whole lines behind "[label] " (in
// a colour per label on a terminal), each label's last lines kept for the
// failure summary and the status page. local_mp reads the lines from pipes
// (output_pump), local_mt from the nodes' streams (node_streams); the owner
// locks.
class labelled_lines {
 public:
  static constexpr std::size_t kept = 20;

  explicit labelled_lines(bool colour) : colour_(colour) {}

  // Moves the lines `partial` begins with to `out`, each behind its label;
  // `at_end`, what is left too, as a last line.
  void take(const std::string& label, std::string& partial, bool at_end,
            std::string& out) {
    std::size_t start = 0;
    for (auto newline = partial.find('\n'); newline != std::string::npos;
         newline = partial.find('\n', start)) {
      add(label, partial.substr(start, newline - start), out);
      start = newline + 1;
    }
    partial.erase(0, start);
    if (at_end && !partial.empty()) {
      add(label, partial, out);
      partial.clear();
    }
  }

  // The label's last lines, oldest first.
  std::vector<std::string> last(const std::string& label) const {
    auto lines = recent_.find(label);
    if (lines == recent_.end()) return {};
    return {lines->second.begin(), lines->second.end()};
  }

 private:
  void add(const std::string& label, const std::string& line, std::string& out) {
    auto nth = colours_.emplace(label, colours_.size()).first->second;
    std::string prefix = "[" + label + "] ";
    if (colour_)
      prefix = "\033[1;3" + std::to_string(nth % 6 + 1) + "m" + prefix + "\033[0m";
    out += prefix + line + "\n";
    auto& lines = recent_[label];
    lines.push_back(line);
    if (lines.size() > kept) lines.pop_front();
  }

  const bool colour_;
  std::map<std::string, std::size_t> colours_;  // by the order labels come in
  std::map<std::string, std::deque<std::string>> recent_;
};

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
  output_pump() {
    if (::pipe2(wake_, O_CLOEXEC) != 0) throw launch_error("cannot create a pipe");
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
      streams_.push_back({ends[0], target, label, {}});
      ++open_[label];
    }
    wake();
    return ends[1];
  }

  // The last lines a node printed, oldest first. For a node that has just
  // died, waits (up to `drain`) until its pipes are at their end, so that
  // its last words, still in flight, are among them.
  std::vector<std::string> last_lines(
      const std::string& label,
      std::chrono::milliseconds drain = std::chrono::milliseconds(0)) {
    std::unique_lock lock(mutex_);
    drained_.wait_for(lock, drain, [&] { return open_[label] == 0; });
    return lines_.last(label);
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
    std::string label, partial;
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
        if (closing_ &&
            (streams_.empty() || std::chrono::steady_clock::now() > give_up)) {
          for (auto& s : streams_) {
            emit(s, true);
            ::close(s.fd);
          }
          streams_.clear();
          return;
        }
        for (const auto& s : streams_) fds.push_back({s.fd, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), closing_ ? 100 : -1) < 0 && errno != EINTR)
        return;
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
    std::string out;
    lines_.take(s.label, s.partial, at_end, out);
    if (!out.empty()) write_all(s.target, out);
  }

  int wake_[2] = {-1, -1};
  std::atomic<bool> closing_{false};
  std::mutex mutex_;
  std::vector<stream> streams_;
  labelled_lines lines_{::isatty(1) && ::isatty(2)};
  std::map<std::string, int> open_;  // pipes not at their end, by label
  std::condition_variable drained_;
  std::thread thread_;
};

}  // namespace lp::detail
