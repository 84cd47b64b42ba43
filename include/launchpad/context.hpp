#pragma once

// What a node may ask about itself and about the program it belongs to.

#include <unistd.h>

#include <chrono>
#include <functional>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/lifecycle/run_progress.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <vector>

namespace lp {

struct node_context {
  std::string label;    // "counter", "actors/3"
  std::string group;    // "actors"; empty outside a group
  int index = -1;       // 3 in "actors/3"; -1 outside a group
  std::string program;  // the name given to lp::program
  std::string launch;   // the launch policy: "test_mt", "local_mt", "local_mp", ...
  std::string run_dir;  // the launch's run directory (its secret, its logs);
                        // empty under a test_multi_threading controller
  int pid = 0;          // the node's process
  // Under local_mp, for a group with resources({.cpus, .gpus}): the cores
  // its process is pinned to and the GPUs handed to it (CUDA_VISIBLE_DEVICES
  // holds them too); empty otherwise.
  std::vector<int> cores;
  std::vector<int> gpus;
};

namespace detail {
// The program the calling thread belongs to: its node's, else the only one
// running in this process.
inline std::shared_ptr<launch_state> launch_of_caller(const char* function) {
  if (auto* launch = this_thread_node().launch) {
    for (auto& running : launch_registry::get().all())
      if (running.get() == launch) return running;
  }
  auto all = launch_registry::get().all();
  if (all.size() == 1) return all.front();
  throw usage_error(std::string(function) +
                    (all.empty()
                         ? " needs a running program, and none runs in this process"
                         : " was called outside a node while several programs run; "
                           "call it from a node, or use the launch's controller"));
}
}  // namespace detail

// The identity of the node whose code calls it (from run(), a handler or the
// node's constructor). Throws lp::usage_error elsewhere.
inline node_context context() {
  const auto* identity = detail::this_thread_node().identity;
  if (!identity)
    throw usage_error(
        "lp::context() was called outside a node; call it from a node's run(), one of "
        "its "
        "methods or its constructor");
  return {identity->label,   identity->group,  identity->index,
          identity->program, identity->launch, identity->run_dir,
          ::getpid(),        identity->cores,  identity->gpus};
}

// When a method must have answered for its caller to hear the answer: the
// client sends its deadline with each call (docs/protocol.md, the
// Lp-Deadline-Ms header), so a method that waits (lp::replay's limiters)
// gives up when nobody would wait for it any more. Over HTTP it comes a
// tenth of the time left (at most 100 ms) before the caller's own, for the
// reply to travel: a method that gives up then answers before the caller
// does, rather than do what it waited for unheard. time_point::max()
// outside a method, or for a caller that sent none (curl, unless it says).
inline std::chrono::steady_clock::time_point caller_deadline() noexcept {
  return detail::this_thread_node().call_deadline;
}

// Stops the whole program: from a node, its own program; from elsewhere (main,
// a signal handler thread), every program running in this process.
LP_API void stop();

inline bool stop_requested() {
  detail::sign_of_life();
  return detail::launch_of_caller("lp::stop_requested()")->stop_requested();
}

// Tells the launch that the run() calling it makes progress, for its group's
// health_timeout (docs/launching.md, "Fault tolerance"): a run() that goes
// that long without a sign is taken for hung. Calls through lp::client,
// lp::stop_requested() and lp::metrics are signs already, and a wait in
// lp::wait_for_stop() or lp::wait_for_runs() never looks hung; this is for
// a run() that works long without any of them. Cheap (a load and a store);
// counts only on run()'s own thread, and does nothing elsewhere.
inline void heartbeat() noexcept {
  detail::sign_of_life();
}

// Waits until the program is asked to stop, at most `timeout`. Returns true
// if it was.
template <class Rep, class Period>
bool wait_for_stop(std::chrono::duration<Rep, Period> timeout) {
  auto launch = detail::launch_of_caller("lp::wait_for_stop()");
  detail::library_wait waiting;
  return launch->wait_for_stop(
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
}

inline void wait_for_stop() {
  auto launch = detail::launch_of_caller("lp::wait_for_stop()");
  detail::library_wait waiting;
  launch->wait_for_stop();
}

// Waits until the run() of every node named (a group's name or a node's
// label) has returned; false if the program stops first. Under every launch
// policy, from any node but those it waits for (lp::usage_error), e.g.
// lp::wait_for_runs("actors") or lp::wait_for_runs({"actors", "learner"}).
// A node restarted after its run() returned does not make it pending again.
inline bool wait_for_runs(const std::vector<std::string>& names) {
  auto launch = detail::launch_of_caller("lp::wait_for_runs()");
  detail::library_wait waiting;
  return launch->wait_for_runs(names);
}
inline bool wait_for_runs(const char* name) {
  return wait_for_runs(std::vector<std::string>{name});
}

// Runs `callback` once when the program is asked to stop (at once if it
// already is), before the servers close: the place to flush and save.
inline void on_stop(std::function<void()> callback) {
  detail::launch_of_caller("lp::on_stop()")->on_stop(std::move(callback));
}

}  // namespace lp
