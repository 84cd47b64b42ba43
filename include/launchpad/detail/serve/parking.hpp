#pragma once

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <launchpad/error.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace lp::detail {

// Where a server's idle keep-alive connections wait for their next request:
// all of them on one thread's epoll, rather than each on a thread of its
// own. A connection parked here is handed back (`then(true)`) when it has
// bytes to read or has hung up, and given up (`then(false)`) when its
// deadline passes or the parking closes; `then` runs on the parking's thread
// (or on the one that closes it), and owns the connection from then on.
class connection_parking {
 public:
  using clock = std::chrono::steady_clock;
  using handler = std::function<void(bool ready)>;

  connection_parking()
      : epoll_(::epoll_create1(EPOLL_CLOEXEC)), wake_(::eventfd(0, EFD_CLOEXEC)) {
    if (epoll_ < 0 || wake_ < 0) {
      std::string why = std::strerror(errno);
      release_fds();
      throw launch_error(
          "a node cannot watch its idle connections (epoll_create1 or eventfd: " + why +
          "); this process is out of file descriptors or memory: raise "
          "ulimit -n, or run fewer nodes in it");
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = wake_;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event);
    thread_ = std::thread([this] { watch(); });
  }
  connection_parking(const connection_parking&) = delete;
  connection_parking& operator=(const connection_parking&) = delete;
  ~connection_parking() {
    close();
    release_fds();
  }

  // False if the parking is closed: the caller keeps the connection.
  bool park(int socket, clock::time_point deadline, handler then) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    parked_.insert_or_assign(socket, entry{deadline, std::move(then)});
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    event.data.fd = socket;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, socket, &event) != 0) {
      parked_.erase(socket);
      return false;
    }
    return true;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return parked_.size();
  }

  // Gives up every parked connection and parks no more; waits for the
  // handlers already running.
  void close() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      closed_ = true;
    }
    std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wake_, &one, sizeof one);
    if (thread_.joinable()) thread_.join();
    std::map<int, entry> left;
    {
      std::lock_guard lock(mutex_);
      left.swap(parked_);
    }
    for (auto& [socket, parked] : left) {
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, socket, nullptr);
      parked.then(false);
    }
  }

 private:
  struct entry {
    clock::time_point deadline;
    handler then;
  };

  void watch() {
    constexpr int batch = 256;
    epoll_event events[batch];
    for (;;) {
      int timeout_ms = 100;  // deadlines are checked at least this often
      int ready = ::epoll_wait(epoll_, events, batch, timeout_ms);
      if (ready < 0 && errno != EINTR) return;
      std::vector<handler> woken, expired;
      {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        for (int i = 0; i < std::max(ready, 0); ++i) {
          int socket = events[i].data.fd;
          if (socket == wake_) continue;
          auto found = parked_.find(socket);
          if (found == parked_.end()) continue;
          ::epoll_ctl(epoll_, EPOLL_CTL_DEL, socket, nullptr);
          woken.push_back(std::move(found->second.then));
          parked_.erase(found);
        }
        auto now = clock::now();
        if (now >= next_sweep_) {
          next_sweep_ = now + std::chrono::milliseconds(timeout_ms);
          for (auto it = parked_.begin(); it != parked_.end();) {
            if (it->second.deadline > now) {
              ++it;
              continue;
            }
            ::epoll_ctl(epoll_, EPOLL_CTL_DEL, it->first, nullptr);
            expired.push_back(std::move(it->second.then));
            it = parked_.erase(it);
          }
        }
      }
      for (auto& then : woken) then(true);
      for (auto& then : expired) then(false);
    }
  }

  void release_fds() {
    if (epoll_ >= 0) ::close(epoll_);
    if (wake_ >= 0) ::close(wake_);
    epoll_ = wake_ = -1;
  }

  int epoll_, wake_;
  mutable std::mutex mutex_;
  std::map<int, entry> parked_;
  bool closed_ = false;
  clock::time_point next_sweep_{};
  std::thread thread_;  // last: it uses the rest
};

}  // namespace lp::detail
