#pragma once
// Programs for the end-to-end tests of multi-processing launches. The test
// and tests/processes/program.cpp build them alike, as a real program and
// its launcher must.
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <launchpad/launchpad.hpp>
#include <launchpad/replay.hpp>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "wire_words.hpp"

namespace scenarios {

// Written whole, then renamed into place: a test that sees the file reads
// all of it (a TSan CI run once read "inner.ended" between its creation and
// its write).
inline void touch(const std::string& path, const std::string& text = "") {
  std::ofstream(path + ".part") << text;
  std::filesystem::rename(path + ".part", path);
}

struct Counter {
  long add(long x) { return total += x; }
  long get() const { return total; }
  long total = 0;
};
LP_SERVICE(Counter, add, get);

struct Producer {
  lp::client<Counter> counter;
  int n;
  void run() {
    for (int i = 0; i < n; ++i) counter.add(1);
    std::cout << "produced " << n << std::endl;
  }
};
LP_SERVICE(Producer);

// Serves until stopped; leaves a file behind when its on_stop ran.
struct Sleeper {
  explicit Sleeper(std::string dir)
      : marker(dir + "/" + lp::context().group + "-" +
               std::to_string(lp::context().index) + ".stopped") {
    lp::on_stop([path = marker] { touch(path); });
  }
  int ping() { return ::getpid(); }
  // What lp::context() says in this node's process.
  std::vector<std::string> whoami() const {
    auto me = lp::context();
    return {me.label, me.launch, me.run_dir, std::to_string(me.pid)};
  }
  std::string marker;
};
LP_SERVICE(Sleeper, ping, whoami);

// Crashes the first `crashes` times it starts, counting starts in a file.
struct Flaky {
  Flaky(std::string dir, int crashes) {
    std::string path = dir + "/flaky.starts";
    int starts = 0;
    std::ifstream(path) >> starts;
    touch(path, std::to_string(++starts));
    if (starts <= crashes) {
      std::cerr << "crashing on start " << starts << std::endl;
      std::_Exit(3);
    }
  }
  std::string ping() { return "pong"; }
};
LP_SERVICE(Flaky, ping);

// Takes a while before it serves.
struct Late {
  Late() { std::this_thread::sleep_for(std::chrono::milliseconds(1500)); }
  int ping() { return 7; }
};
LP_SERVICE(Late, ping);

// Starts while the program stops: its constructor calls the counter until
// the stop refuses a call (lp::stopping, which ends its start), leaving
// `dir`/starter.calling once the first call returned.
struct SlowStarter {
  SlowStarter(lp::client<Counter> counter, const std::string& dir) {
    counter.add(1);
    touch(dir + "/starter.calling");
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < until) {
      counter.add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("the program did not stop within 60 s");
  }
  int ping() { return 1; }
};
LP_SERVICE(SlowStarter, ping);

// Stops the program once the sleeper serves.
struct Stopper {
  lp::client<Sleeper> sleeper;
  void run() {
    sleeper.ping();
    lp::stop();
  }
};
LP_SERVICE(Stopper);

// Takes its time to stop: its on_stop callback sleeps.
struct Stubborn {
  Stubborn() {
    lp::on_stop([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });
  }
  int ping() { return ::getpid(); }
};
LP_SERVICE(Stubborn, ping);

// Starts a helper that starts one of its own, as a node with a data loader
// or a simulator does; each writes its pid into `dir`.
struct Spawner {
  explicit Spawner(const std::string& dir) {
    std::string helper = "echo $$ > " + dir + "/grandchild.pid; sleep 300 & echo $! > " +
                         dir + "/great-grandchild.pid; wait";
    if (std::system(("sh -c '" + helper + "' &").c_str()) != 0)
      throw std::runtime_error("sh");
  }
  int ping() { return ::getpid(); }
};
LP_SERVICE(Spawner, ping);

// Calls the counter as fast as it can until the program stops, as an actor
// calls its inference node; leaves a file behind when its on_stop ran. With
// `fail_in_stop`, its run() throws an error of its own once the stop came.
struct Hammer {
  Hammer(lp::client<Counter> counter, std::string dir, bool fail_in_stop)
      : counter(std::move(counter)), fail_in_stop(fail_in_stop) {
    auto marker = dir + "/" + lp::context().group + "-" +
                  std::to_string(lp::context().index) + ".stopped";
    lp::on_stop([marker] { touch(marker); });
  }
  void run() {
    if (!fail_in_stop) {
      while (!lp::stop_requested()) counter.add(1);
      return;
    }
    try {
      while (!lp::stop_requested()) counter.add(1);
    } catch (const lp::stopping&) {
    }
    std::cerr << "the actor gives up" << std::endl;  // its summary quotes this line
    throw std::runtime_error("an error of the actor's own, while stopping");
  }
  lp::client<Counter> counter;
  bool fail_in_stop;
};
LP_SERVICE(Hammer);

// Calls the counter with a deadline of 500 ms each, and counts the calls
// the counter acknowledged and those that ran out of time, saying so once a
// second, while a test cuts the counter's host off (tests/unit-slurm.cpp).
// Once `after` calls went through after a late one (the cut outlived), it
// says what the counter holds, which must be every acknowledged call, and
// stops the program. Any other error ends its run() with that error.
struct Acknowledger {
  lp::client<Counter> counter;
  int after;
  void run() {
    using clock = std::chrono::steady_clock;
    long acked = 0, late = 0, since_late = 0;
    clock::duration longest_late{};
    auto said = clock::now();
    while (!lp::stop_requested() && (late == 0 || since_late < after)) {
      auto start = clock::now();
      try {
        counter.with_deadline(std::chrono::milliseconds(500)).add(1);
        ++acked;
        ++since_late;
      } catch (const lp::deadline_exceeded&) {
        ++late;
        since_late = 0;
        longest_late = std::max(longest_late, clock::now() - start);
      }
      if (clock::now() - said > std::chrono::seconds(1)) {
        said = clock::now();
        std::cout << "acknowledged " << acked << ", late " << late << std::endl;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (lp::stop_requested()) return;
    auto total = counter.with_deadline(std::chrono::seconds(5)).get();
    std::cout
        << "after the cut: acknowledged " << acked << ", late " << late
        << ", the longest late call took "
        << std::chrono::duration_cast<std::chrono::milliseconds>(longest_late).count()
        << " ms, the counter holds " << total << std::endl;
    lp::stop();
  }
};
LP_SERVICE(Acknowledger);

// Says what it is told: a payload a test looks for on the wire.
struct Echo {
  std::string say(const std::string& words) { return words; }
};
LP_SERVICE(Echo, say);

struct Talker {
  lp::client<Echo> echo;
  std::string words;
  void run() {
    for (int i = 0; i < 20; ++i)
      if (echo.say(words) != words)
        throw std::runtime_error("the echo changed the words");
    std::cout << "the echo said it 20 times" << std::endl;
  }
};
LP_SERVICE(Talker);

// Sends back the array it is sent (scenario "bulk").
struct Mirror {
  lp::tensor<float> echo(lp::tensor<float> values) { return values; }
};
LP_SERVICE(Mirror, echo);

// Calls the mirror 5 times with 4 MB of float32, then writes to
// <dir>/bulk.calls how many replies came back whole and how many of them
// in shared memory (a unix socket's: the mirror on this host), and serves
// until the program stops, or stops it.
struct BulkCaller {
  lp::client<Mirror> mirror;
  std::string dir;
  bool then_stop = false;
  void run() {
    constexpr std::size_t floats = std::size_t{1} << 20;
    lp::tensor<float> values({floats}, std::vector<float>(floats, 0.5f));
    int whole = 0, shared = 0;
    for (int i = 0; i < 5; ++i) {
      auto back = mirror.echo(values);
      whole += back == values;
      shared += back.in_shared_memory();
    }
    touch(dir + "/bulk.calls", std::to_string(whole) + " " + std::to_string(shared));
    if (then_stop)
      lp::stop();
    else
      lp::wait_for_stop();
  }
};
LP_SERVICE(BulkCaller);

// One of two peers that call each other (program::reserve makes the cycle):
// each run() pings the other `rounds` times. A service cannot hold an
// lp::client of a service not declared yet (itself, here) as a plain
// member; it holds it through a pointer, filled where that service is
// complete.
struct Peer {
  Peer(lp::client<Peer> other, int rounds);
  int ping() { return ++pinged; }
  int pings() const { return pinged; }
  void run();
  std::shared_ptr<lp::client<Peer>> other;
  int rounds;
  int pinged = 0;
};
LP_SERVICE(Peer, ping, pings);
inline Peer::Peer(lp::client<Peer> peer, int n)
    : other(std::make_shared<lp::client<Peer>>(std::move(peer))), rounds(n) {}
inline void Peer::run() {
  for (int i = 0; i < rounds; ++i) other->ping();
}

// Waits for the peers' runs with lp::wait_for_runs, then writes how often
// each was pinged into `dir`/runs.done: "rounds,rounds" unless it woke early.
struct Coordinator {
  lp::client<Peer> first, second;
  std::string dir;
  void run() {
    if (!lp::wait_for_runs("peers")) return;
    touch(dir + "/runs.done",
          std::to_string(first.pings()) + "," + std::to_string(second.pings()));
  }
};
LP_SERVICE(Coordinator);

// A counter whose total survives restarts: a checkpointed service.
struct Tally {
  long add(long x) { return total += x; }
  long get() const { return total; }
  long lp_save() const { return total; }
  void lp_restore(long saved) { total = saved; }
  long total = 0;
};
LP_SERVICE(Tally, add, get);

// A replay node's item: a tensor goes as a typed array (tests/unit-replay.cpp).
struct Step {
  BOOST_HANA_DEFINE_STRUCT(Step, (long, id), (lp::tensor<float>, observation));
};

// A Tally that says what it restored, for tests that see only the output
// of a launch (a Slurm job's).
struct LoudTally {
  long add(long x) { return total += x; }
  long lp_save() const { return total; }
  void lp_restore(long saved) {
    total = saved;
    std::cout << "restored a total of " << saved << std::endl;
  }
  long total = 0;
};
LP_SERVICE(LoudTally, add);

// Adds 1 to the tally every 2 ms until the program stops, on through the
// tally's restarts (a call the restart cut off is let go).
struct Adder {
  lp::client<LoudTally> tally;
  void run() {
    while (!lp::wait_for_stop(std::chrono::milliseconds(2))) {
      try {
        tally.add(1);
      } catch (const lp::transport_error&) {
      }
    }
  }
};
LP_SERVICE(Adder);

// A large state saved all the time, for kills in the middle of a save: the
// first element counts the changes.
struct Ballast {
  Ballast() : data(std::size_t{4} << 20, 0.5) {}
  long change() { return static_cast<long>(++data[0]); }
  std::vector<double> lp_save() const { return data; }
  void lp_restore(std::vector<double> saved) { data = std::move(saved); }
  std::vector<double> data;
};
LP_SERVICE(Ballast, change);

// Writes where its process runs into `dir`/<group>.where, as
// "<CUDA_VISIBLE_DEVICES> <XLA_FLAGS> <context().cores> <context().gpus>
// <cores it may use>", "-" for a variable not set and "none" for an empty list.
struct Placed {
  std::string dir;
  void run() {
    auto env = [](const char* name) {
      const char* value = std::getenv(name);
      return std::string(value ? value : "-");
    };
    auto list = [](const std::vector<int>& indices) {
      std::string out;
      for (int index : indices) out += (out.empty() ? "" : ",") + std::to_string(index);
      return out.empty() ? std::string("none") : out;
    };
    cpu_set_t set;
    CPU_ZERO(&set);
    ::sched_getaffinity(0, sizeof set, &set);
    auto me = lp::context();
    touch(dir + "/" + me.group + ".where",
          env("CUDA_VISIBLE_DEVICES") + " " + env("XLA_FLAGS") + " " + list(me.cores) +
              " " + list(me.gpus) + " " + std::to_string(CPU_COUNT(&set)));
  }
};
LP_SERVICE(Placed);

// Deadlocks itself: tie() calls the node's own ping(), which waits for
// tie() to return.
struct Knot {
  explicit Knot(lp::client<Knot> self);
  int ping() { return 1; }
  int tie();
  std::shared_ptr<lp::client<Knot>> self;
};
LP_SERVICE(Knot, ping, tie);
inline Knot::Knot(lp::client<Knot> me)
    : self(std::make_shared<lp::client<Knot>>(std::move(me))) {}
inline int Knot::tie() {
  return self->ping();
}

// Deadlocks itself in run(): it holds a lock while it waits for a thread
// that needs that lock. Counts its starts in `dir`/stuck.starts.
struct Stuck {
  std::string dir;
  void run() {
    std::string path = dir + "/stuck.starts";
    int starts = 0;
    std::ifstream(path) >> starts;
    touch(path, std::to_string(++starts));
    std::mutex mutex;
    std::lock_guard lock(mutex);
    std::thread([&mutex] { std::lock_guard never(mutex); }).join();
  }
};
LP_SERVICE(Stuck);

// Works in run() for 3 s, longer than its group's health_timeout, without
// a call, a metric or a stop check, only with lp::heartbeat() between its
// steps; then writes `dir`/beating.done.
struct Beating {
  std::string dir;
  void run() {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      lp::heartbeat();
    }
    touch(dir + "/beating.done");
  }
};
LP_SERVICE(Beating);

// Its run() only waits for the stop: no hang, however long it waits.
struct Patient {
  void run() { lp::wait_for_stop(); }
};
LP_SERVICE(Patient);

// The graph named `name`; `dir` is a directory the nodes may write to.
// Two launches in one process, both local_mt (each handles the signals
// itself): "sequential_launches", one after the other, the first stopped by
// lp::stop(); "nested_launch", the second started from a node of the first
// and stopped by lp::stop() in it, while the first runs on. Either way the
// first launch that still runs must hear a later SIGTERM. Leaves
// <dir>/inner.ended once the launch to be stopped by lp::stop() has ended.
// Tells whether a 1 MiB block comes from its own mmap in this node process
// (glibc's default) or from the heap (the launch's keep_large_blocks), in
// <dir>/mmapped, then stops the program.
struct MallocProbe {
  std::string dir;
  void run() {
    auto before = ::mallinfo2().hblks;
    char* volatile block = static_cast<char*>(std::malloc(1 << 20));
    block[0] = 1;
    auto during = ::mallinfo2().hblks;
    std::free(block);
    // A sanitizer's own allocator answers malloc: there is nothing to see.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    during = before = 0;
    touch(dir + "/mmapped", "sanitizer");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    during = before = 0;
    touch(dir + "/mmapped", "sanitizer");
#endif
#endif
    if (!std::ifstream(dir + "/mmapped"))
      touch(dir + "/mmapped", during > before ? "yes" : "no");
    lp::stop();
  }
};
LP_SERVICE(MallocProbe);

inline void launch_inner(const std::string& dir, std::string program_path) {
  lp::program inner("inner");
  auto sleeper = inner.group("inner").add_node<Sleeper>(dir);
  inner.add_node<Stopper>("stopper", sleeper);
  char* args[] = {program_path.data(), nullptr};
  int status = lp::launch<lp::local_multi_threading>(inner, 1, args);
  touch(dir + "/inner.ended", std::to_string(status));
}

struct Nester {
  std::string dir;
  std::string program_path;
  void run() {
    launch_inner(dir, program_path);
    // The stop this waits for is the first launch's, as before the second.
    lp::wait_for_stop();
  }
};
LP_SERVICE(Nester);

inline int two_launches(const std::string& name, const std::string& dir, int argc,
                        char** argv) {
  lp::program outer("outer");
  outer.group("outer").add_node<Sleeper>(dir);
  if (name == "nested_launch") {
    outer.add_node<Nester>("nester", dir, std::string(argv[0]));
  } else {
    launch_inner(dir, argv[0]);
  }
  return lp::launch<lp::local_multi_threading>(outer, argc, argv);
}

inline void make(lp::program& p, const std::string& name, const std::string& dir) {
  if (name == "counter") {
    auto c = p.add_node<Counter>("counter");
    auto producers = p.group("producers");
    for (int i = 0; i < 3; ++i) producers.add_node<Producer>(c, 100);
  } else if (name == "malloc_probe") {
    p.add_node<MallocProbe>("probe", dir);
  } else if (name == "sleepers") {
    for (int i = 0; i < 3; ++i) p.group("sleepers").add_node<Sleeper>(dir);
  } else if (name == "flaky") {
    p.group("flaky")
        .restart_on_failure(3, std::chrono::milliseconds(50))
        .add_node<Flaky>(dir, 2);
  } else if (name == "flaky_no_restart") {
    p.group("flaky").add_node<Flaky>(dir, 1);
    p.add_node<Counter>("counter");
  } else if (name == "stubborn") {
    p.add_node<Stubborn>("stubborn");
  } else if (name == "hammer" || name == "hammer_fails") {
    // 16 actors in 4 processes, and the counter in a fifth.
    auto counter = p.add_node<Counter>("counter");
    for (int g = 0; g < 4; ++g) {
      auto actors = p.group("actors" + std::to_string(g));
      actors.colocate();
      for (int i = 0; i < 4; ++i)
        actors.add_node<Hammer>(counter, dir, name == "hammer_fails" && g == 0 && i == 0);
    }
  } else if (name == "spawner") {
    p.add_node<Spawner>("spawner", dir);
  } else if (name == "late") {
    p.add_node<Late>("late");
  } else if (name == "starting_at_stop") {
    p.add_node<SlowStarter>("starter", p.add_node<Counter>("counter"), dir);
  } else if (name == "stopper") {
    auto sleeper = p.group("sleepers").add_node<Sleeper>(dir);
    p.add_node<Stopper>("stopper", sleeper);
  } else if (name == "mutual") {
    auto peers = p.group("peers");
    auto first = peers.reserve<Peer>();
    auto second = peers.add_node<Peer>(first, 50);
    p.define(first, second, 50);
    p.add_node<Coordinator>("coordinator", first, second, dir);
  } else if (name == "checkpointed") {
    p.group("tally")
        .restart_on_failure(5, std::chrono::milliseconds(50))
        .checkpoint_every(std::chrono::milliseconds(100))
        .add_node<Tally>();
  } else if (name == "replayed") {
    p.group("replay")
        .restart_on_failure(5, std::chrono::milliseconds(50))
        .checkpoint_every(std::chrono::milliseconds(100))
        .add_node<lp::replay<Step>>(
            lp::replay_config{.tables = {{.name = "steps",
                                          .sampler = lp::sampler::fifo(),
                                          .max_size = 1000}},
                              .seed = 7});
  } else if (name == "tallied") {
    // A restart waits a second: long enough for a test to read the
    // checkpoint the restart will take, before the new process saves again.
    auto tally = p.group("tally")
                     .restart_on_failure(3, std::chrono::seconds(1))
                     .checkpoint_every(std::chrono::milliseconds(100))
                     .add_node<LoudTally>();
    p.add_node<Adder>("adder", tally);
  } else if (name == "ballast") {
    p.group("ballast")
        .restart_on_failure(10, std::chrono::milliseconds(10))
        .checkpoint_every(std::chrono::milliseconds(10))
        .add_node<Ballast>();
  } else if (name == "placed" || name == "environment") {
    auto learner = p.group("learner");
    learner.env({{"XLA_FLAGS", "--xla_lp_test=1"}});
    if (name == "placed") {
      learner.resources({.cpus = 1, .gpus = 2});
      p.group("actors").resources({.gpus = 1}).add_node<Placed>(dir);
    }
    learner.add_node<Placed>(dir);
    p.group("others").add_node<Placed>(dir);
  } else if (name == "knot" || name == "knot_restarted") {
    auto knots = p.group("knots").health_timeout(std::chrono::milliseconds(500));
    if (name == "knot_restarted")
      knots.restart_on_failure(1, std::chrono::milliseconds(50));
    auto knot = knots.reserve<Knot>();
    p.define(knot, knot);
  } else if (name == "stuck" || name == "stuck_restarted") {
    auto stuck = p.group("stuck").health_timeout(std::chrono::milliseconds(500));
    if (name == "stuck_restarted")
      stuck.restart_on_failure(1, std::chrono::milliseconds(50));
    stuck.add_node<Stuck>(dir);
  } else if (name == "beating") {
    auto beating = p.group("beating").health_timeout(std::chrono::milliseconds(500));
    beating.add_node<Beating>(dir);
    beating.add_node<Patient>();
  } else if (name == "saved_on_stop") {
    // The tally's only checkpoint is the one it saves when it stops
    // cleanly; with a restart policy, an end of the stop taken for a crash
    // shows as a restart.
    p.group("tally")
        .restart_on_failure(3, std::chrono::milliseconds(50))
        .add_node<Tally>();
    for (int i = 0; i < 2; ++i) p.group("sleepers").add_node<Sleeper>(dir);
  } else if (name == "partitioned" || name == "partitioned_patient") {
    // A whole host each (the test hosts' slurmds have 4 CPUs): the caller
    // calls the counter across the network. The patient counter's
    // health_timeout is far above a short cut and the commands that make
    // and heal it, whatever the probes' phase.
    auto counter =
        p.group("counter")
            .resources({.cpus = 4})
            .health_timeout(std::chrono::seconds(name == "partitioned" ? 3 : 10))
            .add_node<Counter>();
    p.group("caller").resources({.cpus = 4}).add_node<Acknowledger>(counter, 20);
  } else if (name == "wire") {
    auto echo = p.group("echo").resources({.cpus = 4}).add_node<Echo>();
    p.group("talker")
        .resources({.cpus = 4})
        .add_node<Talker>(echo, std::string(wire_words));
  } else if (name == "bulk") {
    // A whole host each, as "wire".
    auto mirror = p.group("mirror").resources({.cpus = 4}).add_node<Mirror>();
    p.group("caller").resources({.cpus = 4}).add_node<BulkCaller>(mirror, dir);
  } else if (name == "bulk_in_one_pod") {
    // One process: in a pod of its own under Kubernetes.
    auto pair = p.group("pair").colocate();
    auto mirror = pair.add_node<Mirror>();
    pair.add_node<BulkCaller>(mirror, dir, true);
  } else if (name == "many" || name == "many_colocated") {
    auto many = p.group("many");
    if (name == "many_colocated") many.colocate();
    for (int i = 0; i < 64; ++i) many.add_node<Counter>();
  } else {
    throw lp::usage_error("no scenario named " + name);
  }
}

}  // namespace scenarios
