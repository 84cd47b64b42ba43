#pragma once

// Under local_mt every node is a thread of the launcher's process, and they
// all write to its one terminal. What a node writes to std::cout, std::cerr
// and std::clog comes out as under local_mp: in whole lines behind
// "[label] ", its last lines kept for the status page. Of all the ways to
// write, only these streams can be given a buffer of ours, which asks the
// writing thread whose code it runs (its node_scope: a run(), a handler, a
// constructor). printf, write(2) on fd 1 or 2, and threads a node starts
// itself bypass it (docs/observability.md).

#include <unistd.h>

#include <iostream>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/os/output.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace lp::detail {

class node_streams {
 public:
  // std::cout and std::cerr are the process's, and so is taking them over:
  // a launch of `policy` that starts while another launch in this process
  // has them (one started from a node of it) shares that one, which labels
  // each line with the node that writes it, whichever launch it is of. The
  // last launch to go gives the streams back, under the lock, so that a
  // launch that starts meanwhile takes them over only once they are back.
  static std::shared_ptr<node_streams> take_over(std::string policy) {
    std::lock_guard lock(taking_over());
    static std::weak_ptr<node_streams> current;
    if (auto shared = current.lock()) return shared;
    std::shared_ptr<node_streams> made(new node_streams(std::move(policy)),
                                       [](node_streams* gone) {
                                         std::lock_guard lock(taking_over());
                                         delete gone;
                                       });
    current = made;
    return made;
  }

  // Takes over `streams` for the nodes of launches of `policy`: construct
  // it before those nodes start, destroy it after they all ended, while no
  // other thread writes to the streams (their buffers change hands).
  explicit node_streams(std::string policy,
                        const std::vector<std::ostream*>& streams = {&std::cout,
                                                                     &std::cerr,
                                                                     &std::clog})
      : policy_(std::move(policy)), lines_(::isatty(1) && ::isatty(2)) {
    for (auto* stream : streams) {
      buffers_.emplace_back(std::make_unique<buffer>(*this, stream->rdbuf()));
      stream->rdbuf(buffers_.back().get());
      streams_.push_back(stream);
    }
  }
  node_streams(const node_streams&) = delete;
  node_streams& operator=(const node_streams&) = delete;
  // Gives the streams back; a line a node left unfinished ends here.
  ~node_streams() {
    for (std::size_t i = 0; i < streams_.size(); ++i)
      streams_[i]->rdbuf(buffers_[i]->original);
    std::lock_guard lock(mutex_);
    for (auto& [key, partial] : partial_) {
      auto* which = std::get<buffer*>(key);
      std::string out;
      lines_.take(std::get<std::string>(key), partial, /*at_end=*/true, out);
      which->original->sputn(out.data(), static_cast<std::streamsize>(out.size()));
      which->original->pubsync();
    }
  }

  // The last lines the node wrote, oldest first (at most
  // labelled_lines::kept).
  std::vector<std::string> last_lines(const std::string& label) const {
    std::lock_guard lock(mutex_);
    return lines_.last(label);
  }

 private:
  // A stream's buffer while it is taken over. It has no buffer area of its
  // own, so that every write reaches xsputn or overflow, where a lock
  // keeps the threads apart.
  struct buffer : std::streambuf {
    buffer(node_streams& owner, std::streambuf* was) : original(was), owner_(owner) {}
    std::streambuf* const original;

   protected:
    std::streamsize xsputn(const char* text, std::streamsize n) override {
      const auto* label = owner_.writing_node();
      if (!label) return original->sputn(text, n);
      owner_.write(*this, *label, std::string_view(text, static_cast<std::size_t>(n)));
      return n;
    }
    int_type overflow(int_type c) override {
      if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
      char one = traits_type::to_char_type(c);
      return xsputn(&one, 1) == 1 ? c : traits_type::eof();
    }
    // A flush reaches the terminal; a node's unfinished line waits for its
    // end, so that lines are never cut into one another.
    int sync() override { return original->pubsync(); }

   private:
    node_streams& owner_;
  };

  static std::mutex& taking_over() {
    static std::mutex mutex;
    return mutex;
  }

  const std::string* writing_node() const {
    const auto* node = this_thread_node().identity;
    return node && node->launch == policy_ ? &node->label : nullptr;
  }

  void write(buffer& which, const std::string& label, std::string_view text) {
    std::lock_guard lock(mutex_);
    auto key = std::make_tuple(std::this_thread::get_id(), &which, label);
    auto& partial = partial_[key];
    partial.append(text);
    std::string out;
    lines_.take(label, partial, /*at_end=*/false, out);
    if (partial.empty()) partial_.erase(key);
    if (!out.empty())
      which.original->sputn(out.data(), static_cast<std::streamsize>(out.size()));
  }

  const std::string policy_;
  std::vector<std::ostream*> streams_;
  std::vector<std::unique_ptr<buffer>> buffers_;
  mutable std::mutex mutex_;
  // What a thread wrote of a line not yet ended, by thread, stream and node
  // (a direct call runs the callee's handler on the caller's thread).
  std::map<std::tuple<std::thread::id, buffer*, std::string>, std::string> partial_;
  labelled_lines lines_;
};

}  // namespace lp::detail
