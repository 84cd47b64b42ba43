#pragma once

// The services of tests/python_nodes: a C++ Counter, and services that
// Python classes of nodes.py serve (LP_PYTHON), some of them declared
// unlike their class on purpose.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <launchpad/launchpad.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace pyn {

struct Counter {
  long add(long x) {
    std::lock_guard lock(mutex);
    return total += x;
  }
  long get() {
    std::lock_guard lock(mutex);
    return total;
  }
  static constexpr bool lp_concurrent_handlers = true;
  std::mutex mutex;
  long total = 0;
};
LP_SERVICE(Counter, add, get);

struct Learner {
  double update(std::vector<float> batch);
  long steps();
  std::string describe();
  void fail(std::string message);
  long sleep_ms(long ms);
};
LP_SERVICE(Learner, update, steps, describe, fail, sleep_ms);
LP_PYTHON(Learner, "nodes", "Learner");

struct Runner {
  long ping();
  void run();
};
LP_SERVICE(Runner, ping);
LP_PYTHON(Runner, "nodes", "Runner");

struct Tally {
  long add(long x);
  long pid();
  std::string env(std::string name);
  // Its checkpoint: Python's state() and restore(value), of this type.
  long lp_save() const;
  void lp_restore(long total);
};
LP_SERVICE(Tally, add, pid, env);
LP_PYTHON(Tally, "nodes", "Tally");

struct Fanout {
  long add_all(long x);
};
LP_SERVICE(Fanout, add_all);
LP_PYTHON(Fanout, "nodes", "Fanout");

// Its run() works `seconds`, with a launchpad_client.heartbeat() every
// 0.1 s if `beat` (none: a hang), then waits for the stop.
struct Beater {
  bool finished();
  long pid();
  void run();
};
LP_SERVICE(Beater, finished, pid);
LP_PYTHON(Beater, "nodes", "Beater");

// Its run() polls launchpad_client.stop_requested() every 2 ms (after it
// calls launchpad_client.stop() itself `stop_after` s in, if that is >= 0),
// notes when it saw the stop, works 0.3 s more and counts that in its
// state; its handler wait_stop() polls the same (nodes.py).
struct Waiter {
  double wait_stop();
  long pid();
  void run();
  long lp_save() const;
  void lp_restore(long rests);
};
LP_SERVICE(Waiter, wait_stop, pid);
LP_PYTHON(Waiter, "nodes", "Waiter");

// Calls wait_stop() from its run(), so that a Python handler runs when the
// program stops.
struct Prober {
  lp::client<Waiter> waiter;
  void run() { waiter.with_deadline(std::chrono::seconds(120)).wait_stop(); }
};
LP_SERVICE(Prober);

// Its run() calls lp::stop() `after` s in, once Waiter's run() has started,
// and notes when in `notes`/stop_called, as Waiter notes its own.
struct Stopper {
  std::string notes;
  double after;
  void run() {
    auto started = std::filesystem::path(notes) / "run_started";
    while (!std::filesystem::exists(started) && !lp::stop_requested())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::duration<double>(after));
    auto now = std::chrono::duration<double>(
        std::chrono::steady_clock::now().time_since_epoch());
    std::ofstream(std::filesystem::path(notes) / "stop_called")
        << std::fixed << now.count();
    lp::stop();
  }
};
LP_SERVICE(Stopper);

// A C++ node that drives a Python one from its run().
struct Actor {
  lp::client<Learner> learner;
  int updates = 3;
  void run() {
    for (int i = 0; i < updates; ++i) learner.update({1.f, 2.f, 3.f});
  }
};
LP_SERVICE(Actor);

// Plain structs, with no macro: each crosses to a Python @dataclass of the
// same fields in order (nodes.py) and back, in calls and to __init__.
struct Pose {
  double x = 0;
  double y = 0;
  std::string frame;
  bool operator==(const Pose&) const = default;
};
struct Step {
  Pose origin;
  std::vector<float> deltas;  // along x, then y
  std::optional<Pose> goal;
};
#define PYN_WALKER_LIKE(Name, class_name) \
  struct Name {                           \
    Pose walk(Step step);                 \
    std::vector<Pose> trail();            \
    std::string name();                   \
  };                                      \
  LP_SERVICE(Name, walk, trail, name);    \
  LP_PYTHON(Name, "nodes", class_name)

PYN_WALKER_LIKE(Walker, "Walker");
PYN_WALKER_LIKE(WalkerOtherPose, "WalkerOtherPose");  // its Pose has z for y

// Each of these is declared as Learner is, and served by a class that
// differs from it one way (or cannot be had at all).
#define PYN_LEARNER_LIKE(Name, module, class_name) \
  struct Name {                                    \
    double update(std::vector<float> batch);       \
    long steps();                                  \
  };                                               \
  LP_SERVICE(Name, update, steps);                 \
  LP_PYTHON(Name, module, class_name)

PYN_LEARNER_LIKE(MissingMethod, "nodes", "NoUpdate");
PYN_LEARNER_LIKE(ArityDiffers, "nodes", "TwoArguments");
PYN_LEARNER_LIKE(TypeDiffers, "nodes", "ScalarBatch");
PYN_LEARNER_LIKE(ImportFails, "broken_module", "Learner");
PYN_LEARNER_LIKE(ClassMissing, "nodes", "NoSuchClass");
PYN_LEARNER_LIKE(InitRaises, "nodes", "RaisesInInit");

struct RunDeclaredOnly {
  long steps();
  void run();
};
LP_SERVICE(RunDeclaredOnly, steps);
LP_PYTHON(RunDeclaredOnly, "nodes", "TwoArguments");

// On one host (issue 51): a C++ node of arrays, and a Python node that
// echoes arrays and relays them to it, each call over the callee's unix
// socket, large arrays through shared memory.
struct Arrays {
  std::vector<float> echo(std::vector<float> values) { return values; }
};
LP_SERVICE(Arrays, echo);

struct Mirror {
  std::vector<float> echo(std::vector<float> values);
  // Whether `values` reached Python as a read-only view of shared memory.
  bool in_shared_memory(std::vector<float> values);
  // Sends `n` counting floats to Arrays' echo `times` times; whether each
  // reply was them, read in place from shared memory.
  bool relay(long n, long times);
  // Its process's segment_pool figures (shared_memory.py): messages whose
  // arrays went through shared memory, bytes its segments hold.
  long shared_messages();
  long shared_bytes();
  long shared_fallbacks();  // arrays it sent through the socket at its cap
  long pid();               // of its Python process
};
LP_SERVICE(Mirror, echo, in_shared_memory, relay, shared_messages, shared_bytes,
           shared_fallbacks, pid);
LP_PYTHON(Mirror, "nodes", "Mirror");

}  // namespace pyn
