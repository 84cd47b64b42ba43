#pragma once

/// @file
/// What a node may ask about itself and about the program it belongs to:
/// lp::context(), the stop (lp::stop(), lp::stop_requested(),
/// lp::wait_for_stop(), lp::on_stop()), lp::wait_for_runs(), lp::heartbeat()
/// and lp::caller_deadline(). docs/concepts.md, "Node lifecycle", says when
/// each applies.

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

/// The identity of a node, as lp::context() gives it to the node's code.
struct node_context {
  std::string label;    ///< "counter", "actors/3"
  std::string group;    ///< "actors"; empty outside a group
  int index = -1;       ///< 3 in "actors/3"; -1 outside a group
  std::string program;  ///< the name given to lp::program
  std::string launch;   ///< the launch policy: "test_mt", "local_mt", "local_mp", ...
  /// The launch's run directory (its secret, its logs); empty under a
  /// test_multi_threading controller.
  std::string run_dir;
  int pid = 0;  ///< the node's process
  /// Under local_mp, for a group with resources({.cpus, .gpus}): the cores
  /// its process is pinned to; empty otherwise.
  std::vector<int> cores;
  /// Under local_mp, for a group with resources({.cpus, .gpus}): the GPUs
  /// handed to its process (CUDA_VISIBLE_DEVICES holds them too); empty
  /// otherwise.
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

/// The identity of the node whose code calls it: from run(), a method or the
/// node's constructor.
///
/// ```cpp
/// void run() {
///   auto me = lp::context();  // me.label == "actors/3", me.index == 3
///   seed(me.index);
/// }
/// ```
///
/// Threads that a node starts itself are not the node's: read the context
/// first and pass it on.
/// @throws lp::usage_error when called from any other thread
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

/// When a method must have answered for its caller to hear the answer.
///
/// The client sends its deadline with each call (docs/protocol.md, the
/// `Lp-Deadline-Ms` header), so a method that waits (lp::replay's limiters)
/// gives up when nobody would wait for it any more. Over HTTP it comes a
/// tenth of the time left (at most 100 ms) before the caller's own, for the
/// reply to travel: a method that gives up then answers before the caller
/// does, rather than do what it waited for unheard.
///
/// ```cpp
/// Score evaluate(Policy policy) {
///   auto left = lp::caller_deadline() - std::chrono::steady_clock::now();
///   if (left < std::chrono::seconds(10))  // an evaluation takes about 10 s
///     throw std::runtime_error("too little time left to evaluate");
///   ...
/// }
/// ```
///
/// @return the deadline; `time_point::max()` outside a method, or for a caller
/// that sent none (curl, unless it says)
inline std::chrono::steady_clock::time_point caller_deadline() noexcept {
  return detail::this_thread_node().call_deadline;
}

/// Stops the whole program: from a node, its own program; from elsewhere
/// (main, a signal handler thread), every program running in this process.
///
/// It returns once the lp::on_stop callbacks have run (on this thread, or on
/// the one that asked first); the launch then waits for every run() to
/// return and closes the servers (docs/concepts.md, "Node lifecycle").
LP_API void stop();

/// Whether the program was asked to stop: the test of a run() that loops.
///
/// ```cpp
/// void run() {
///   while (!lp::stop_requested()) step();
/// }
/// ```
///
/// A call from run() is also a sign of its progress (lp::heartbeat()).
/// @throws lp::usage_error outside a node, unless exactly one program runs in
/// this process
inline bool stop_requested() {
  detail::sign_of_life();
  return detail::launch_of_caller("lp::stop_requested()")->stop_requested();
}

/// Tells the launch that the run() calling it makes progress, for its
/// group's health_timeout (docs/launching.md, "Hung nodes").
///
/// A run() that goes that long without a sign is taken for hung. Calls
/// through lp::client, lp::stop_requested() and lp::metrics are signs
/// already, and a wait in lp::wait_for_stop() or lp::wait_for_runs() never
/// looks hung; this is for a run() that works long without any of them.
/// Cheap (a load and a store); counts only on run()'s own thread, and does
/// nothing elsewhere.
inline void heartbeat() noexcept {
  detail::sign_of_life();
}

/// Waits until the program is asked to stop, at most `timeout`.
///
/// ```cpp
/// void run() {
///   while (!lp::wait_for_stop(std::chrono::seconds(1))) tick();  // once a second
/// }
/// ```
///
/// @return true if the program was asked to stop
/// @throws lp::usage_error outside a node, unless exactly one program runs in
/// this process
template <class Rep, class Period>
bool wait_for_stop(std::chrono::duration<Rep, Period> timeout) {
  auto launch = detail::launch_of_caller("lp::wait_for_stop()");
  detail::library_wait waiting;
  return launch->wait_for_stop(
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
}

/// Waits until the program is asked to stop.
/// @throws lp::usage_error outside a node, unless exactly one program runs in
/// this process
inline void wait_for_stop() {
  auto launch = detail::launch_of_caller("lp::wait_for_stop()");
  detail::library_wait waiting;
  launch->wait_for_stop();
}

/// Waits until the run() of every node named has returned, under every
/// launch policy.
///
/// ```cpp
/// lp::wait_for_runs({"actors", "learner"});  // groups' names or nodes' labels
/// ```
///
/// A node restarted after its run() returned does not make it pending again
/// (docs/launching.md, "Waiting for a group").
/// @param names groups' names or nodes' labels
/// @return true once they have returned; false if the program stops first
/// @throws lp::usage_error from a node it would wait for, or outside a node
/// unless exactly one program runs in this process
/// @throws lp::graph_error for a name that is no node or group of the program
inline bool wait_for_runs(const std::vector<std::string>& names) {
  auto launch = detail::launch_of_caller("lp::wait_for_runs()");
  detail::library_wait waiting;
  return launch->wait_for_runs(names);
}
/// Waits until the run() of every node of one group, or of one node, has
/// returned: lp::wait_for_runs("actors").
/// @param name a group's name or a node's label
/// @return true once they have returned; false if the program stops first
inline bool wait_for_runs(const char* name) {
  return wait_for_runs(std::vector<std::string>{name});
}

/// Runs `callback` once when the program is asked to stop (at once if it
/// already is), while every server still serves: the place to flush and
/// save.
///
/// ```cpp
/// Logger() {
///   lp::on_stop([this] { file_.flush(); });
/// }
/// ```
///
/// An exception from `callback` counts as a failure of the node.
/// @throws lp::usage_error outside a node, unless exactly one program runs in
/// this process
inline void on_stop(std::function<void()> callback) {
  detail::launch_of_caller("lp::on_stop()")->on_stop(std::move(callback));
}

}  // namespace lp
