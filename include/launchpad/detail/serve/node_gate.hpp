#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace lp::detail {

// The calls a node lets in: every call until the node drains, none after.
// Draining waits for the calls already in to return and, for a while, for
// their replies to be written (HTTP writes a reply after the handler
// returns). One gate per node, shared by its HTTP server and by the direct
// calls of its own process, so a stopping node treats both alike.
class node_gate {
 public:
  // Lets a call in, unless the node drains. A call let in must be followed
  // by left(), and by written() if it was let in with a reply to write.
  bool enter(bool reply_to_write) {
    std::lock_guard lock(mutex_);
    if (draining_) return false;
    ++in_flight_;
    unwritten_ += reply_to_write;
    return true;
  }

  void left() {
    std::lock_guard lock(mutex_);
    if (--in_flight_ == 0) idle_.notify_all();
  }

  void written() {
    std::lock_guard lock(mutex_);
    if (--unwritten_ == 0) idle_.notify_all();
  }

  // From now on no call gets in. Returns once the calls in have returned,
  // and their replies are written or a second has passed (a reply whose
  // client has gone is given up then).
  void drain() {
    std::unique_lock lock(mutex_);
    draining_ = true;
    idle_.wait(lock, [&] { return in_flight_ == 0; });
    idle_.wait_for(lock, std::chrono::seconds(1), [&] { return unwritten_ == 0; });
  }

  bool draining() {
    std::lock_guard lock(mutex_);
    return draining_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int in_flight_ = 0;  // calls whose handler runs
  int unwritten_ = 0;  // calls whose reply is not written yet
  bool draining_ = false;
};

}  // namespace lp::detail
