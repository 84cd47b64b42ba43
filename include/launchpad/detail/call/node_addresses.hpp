#pragma once

#include <chrono>
#include <condition_variable>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/error.hpp>
#include <map>
#include <mutex>
#include <string>

namespace lp::detail {

// Where the nodes of a launch serve. Nodes publish their address once they
// serve; callers look addresses up, waiting for a node that does not serve
// yet. In one process this is a map; across processes the launcher keeps
// it (rendezvous.hpp).
class directory {
 public:
  virtual ~directory() = default;
  virtual void publish(const std::string& label, const address& where) = 0;
  // Waits up to `timeout` for the node's address. Throws transport_error,
  // naming the node and the method being called, when the node is gone or
  // does not serve in time.
  virtual address lookup(const std::string& label, const std::string& method,
                         std::chrono::steady_clock::duration timeout) = 0;
  // A call to this address failed to connect: the node may have restarted
  // elsewhere, so look it up afresh next time.
  virtual void forget(const std::string& label, const address& where) = 0;
  // Lookups fail from now on, rather than wait for a node that never comes.
  virtual void close() = 0;
};

// The directory of a launch whose nodes all run in this process.
class local_directory final : public directory {
 public:
  void publish(const std::string& label, const address& where) override {
    {
      std::lock_guard lock(mutex_);
      addresses_[label] = where;
    }
    changed_.notify_all();
  }

  address lookup(const std::string& label, const std::string& method,
                 std::chrono::steady_clock::duration timeout) override {
    std::unique_lock lock(mutex_);
    bool known = changed_.wait_for(
        lock, timeout, [&] { return closed_ || addresses_.count(label) != 0; });
    if (closed_) throw transport_error(label, method, "the program has stopped");
    if (!known)
      throw transport_error(label, method, "the node did not start serving in time");
    return addresses_[label];
  }

  void forget(const std::string&, const address&) override {}

  void close() override {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, address> addresses_;
  bool closed_ = false;
};

}  // namespace lp::detail
