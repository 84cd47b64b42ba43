#pragma once

#include <chrono>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/serve/served_node.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/error.hpp>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// A channel to a node in this process that calls it without HTTP, on the
// caller's thread (lp::direct_calls<P>): for unit tests of big programs, and
// colocated nodes. Arguments and results are still encoded and decoded, so a
// method sees copies and fails the same ways; a call cannot be cut short,
// so one that overruns its deadline raises lp::deadline_exceeded when it
// returns.
class direct_channel final : public channel {
 public:
  direct_channel(std::string node, served_node& target)
      : node_(std::move(node)), target_(&target) {}

  const std::string& node() const override { return node_; }

  // The reply is in this process already: no sink saves a copy.
  raw_reply call(const std::string& method, std::span<const std::string_view> args,
                 std::span<const cbor::bulk_array>, const call_deadline& deadline,
                 reply_sink*) override {
    // Held through the call, so close() waits for calls that found the node
    // before it goes away.
    std::shared_lock lock(mutex_);
    if (!target_) throw transport_error(node_, method, "the program has stopped");
    struct request_body {};
    struct reply_body {};
    std::string_view request = args.empty() ? std::string_view() : args[0];
    if (args.size() > 1) {
      auto& joined = thread_buffer<request_body>();
      for (auto piece : args) joined += piece;
      request = joined;
    }
    auto& reply = written_reply::of_this_thread<reply_body>();
    auto [status, ended] =
        call_in_process(*target_, method, request, reply, deadline.made, deadline.at);
    lock.unlock();
    if (ended > deadline.at)
      throw expired_call(node_, method, deadline.length,
                         " (a direct call, which ran to its end)");
    return {status, protocol::format::cbor, reply.joined(thread_buffer<reply_body>())};
  }

  void close() override {
    std::unique_lock lock(mutex_);
    target_ = nullptr;
  }

 private:
  const std::string node_;
  std::shared_mutex mutex_;
  served_node* target_;
};

}  // namespace lp::detail
