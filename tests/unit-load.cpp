// Load without loss: many client threads and many outstanding futures
// against one node. Every call is answered exactly once, with its own
// answer, and the node's memory stays flat from one burst to the next.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <launchpad/detail/util/malloc_tuning.hpp>
#include <launchpad/detail/util/thread_pool.hpp>

#include "command.hpp"
#include "process_figures.hpp"
#include "services.hpp"

// Under a sanitizer the resident set says little about the program: ASan
// quarantines freed memory and TSan keeps shadow and history per thread.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOAD_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define LOAD_UNDER_SANITIZER 1
#endif
#endif

namespace load {

#ifdef LOAD_UNDER_SANITIZER
constexpr bool under_sanitizer = true;
#else
constexpr bool under_sanitizer = false;
#endif

// Records every call by the id its caller chose. Calls to one node run one
// at a time, so the members need no lock.
struct Ledger {
  explicit Ledger(long ids) : seen(static_cast<std::size_t>(ids), 0) {}

  // Answers ticket * ids + id, where ticket is 1, 2, 3, ... in the order the
  // calls ran: the id shows the reply is this call's own, the ticket that
  // the call ran once (no two replies may carry the same ticket).
  long add(long id) {
    if (id < 0 || id >= size()) {
      ++strays;
      return -1;
    }
    auto& mark = seen[static_cast<std::size_t>(id)];
    if (mark) ++duplicates;
    mark = 1;
    ++calls;
    return calls * size() + id;
  }
  long total() const { return calls; }
  long duplicate_calls() const { return duplicates; }
  long stray_calls() const { return strays; }
  long missing() const {
    return static_cast<long>(std::count(seen.begin(), seen.end(), 0));
  }

  long size() const { return static_cast<long>(seen.size()); }

  std::vector<std::uint8_t> seen;
  long calls = 0, duplicates = 0, strays = 0;
};
LP_SERVICE(Ledger, add, total, duplicate_calls, stray_calls, missing);

// A node (one call at a time) whose method waits on futures of its own: the
// calls queued for it hold pool slots while it runs.
struct Relay {
  lp::client<t::Counter> counter;
  long fan(long n) {
    std::vector<std::future<long>> pending;
    for (long i = 0; i < n; ++i) pending.push_back(counter.async.add(1));
    long last = 0;
    for (auto& f : pending) last = std::max(last, f.get());
    return last;
  }
};
LP_SERVICE(Relay, fan);

// Checks the replies of one batch of calls: each carries its caller's id and
// a ticket no other reply carries.
class replies {
 public:
  explicit replies(long ids)
      : ids_(ids), tickets_(static_cast<std::size_t>(ids) + 1, 0) {}

  void record(long id, long answer) {
    if (answer < 0 || answer % ids_ != id) {
      ++wrong_;
      return;
    }
    long ticket = answer / ids_;
    if (ticket < 1 || ticket > ids_)
      ++wrong_;
    else if (tickets_[static_cast<std::size_t>(ticket)]++)
      ++repeated_;
    ++answered_;
  }
  void failed(const std::string& why) {
    if (failures_++ == 0) first_failure_ = why;
  }
  void merge(const replies& other) {
    for (std::size_t i = 0; i < tickets_.size(); ++i) {
      if (tickets_[i] && other.tickets_[i]) ++repeated_;
      tickets_[i] = static_cast<std::uint8_t>(tickets_[i] | other.tickets_[i]);
    }
    answered_ += other.answered_;
    wrong_ += other.wrong_;
    repeated_ += other.repeated_;
    if (failures_ == 0) first_failure_ = other.first_failure_;
    failures_ += other.failures_;
  }

  // Every one of `expected` calls answered, rightly, with distinct tickets.
  void check(long expected) const {
    INFO("first failure: " << first_failure_);
    CHECK(failures_ == 0);
    CHECK(wrong_ == 0);
    CHECK(repeated_ == 0);
    CHECK(answered_ == expected);
  }

 private:
  long ids_;
  std::vector<std::uint8_t> tickets_;
  long answered_ = 0, wrong_ = 0, repeated_ = 0, failures_ = 0;
  std::string first_failure_;
};

// What the node's tally says: every id in [0, ids) seen exactly once.
void check_ledger(lp::client<Ledger>& ledger, long expected) {
  CHECK(ledger.total() == expected);
  CHECK(ledger.duplicate_calls() == 0);
  CHECK(ledger.stray_calls() == 0);
  CHECK(ledger.missing() == 0);
}

// Issues `count` calls as futures from this thread, ids [first, first +
// count), all outstanding at once, then waits for every one.
void burst(lp::client<Ledger>& ledger, long first, long count, replies& answers) {
  std::vector<std::future<long>> pending;
  pending.reserve(static_cast<std::size_t>(count));
  for (long id = first; id < first + count; ++id) pending.push_back(ledger.async.add(id));
  for (long i = 0; i < count; ++i) {
    try {
      answers.record(first + i, pending[static_cast<std::size_t>(i)].get());
    } catch (const std::exception& e) {
      answers.failed(e.what());
    }
  }
}

// The connections open on a node's server, as its metrics say.
long open_connections(const std::string& url, const std::string& secret) {
  httplib::Client http(url);
  auto reply = http.Get("/lp/v1/metrics", {{"Authorization", "Bearer " + secret},
                                           {"Accept", "application/json"}});
  REQUIRE(reply);
  return lp::json::parse(reply->body).at("connections").get<long>();
}

using figures::resident_mib;
using figures::seconds_since;
using figures::sockets_now;
using figures::threads_now;

}  // namespace load

TEST_SUITE("load") {
  // First in the suite, so that no other pool's threads leave meanwhile.
  TEST_CASE("what a burst's threads held goes back to the kernel once they retire") {
    if (load::under_sanitizer) {
      MESSAGE("not checked under a sanitizer, whose allocator is not glibc's");
      return;
    }
    for (const char* chosen :
         {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"})
      if (std::getenv(chosen)) {
        MESSAGE(chosen << " is set: the process's malloc is the user's, not tuned");
        return;
      }
    lp::detail::keep_large_blocks();  // as a process that hosts nodes does
    constexpr int threads = 32;
    constexpr std::size_t block = 256 << 10, blocks = 16;  // 4 MiB a thread, freed
    const double before = load::resident_mib();
    const auto returns_before = lp::detail::memory_returns();
    lp::detail::thread_pool pool(threads, std::chrono::milliseconds(100));
    std::latch all_busy(threads);
    std::atomic<int> done{0};
    // A block of each thread that outlives it (a reply, a connection), its
    // first, below the large ones in its arena: the little the thread frees
    // as it ends does not reach them.
    std::array<std::unique_ptr<char[]>, threads> survivors;
    std::atomic<int> started{0};
    for (int i = 0; i < threads; ++i)
      pool.enqueue([&] {
        survivors[static_cast<std::size_t>(started++)] = std::make_unique<char[]>(512);
        std::array<std::unique_ptr<char[]>, blocks> used;
        for (auto& b : used) {
          b = std::make_unique_for_overwrite<char[]>(block);
          std::memset(b.get(), 'x', block);  // resident
        }
        all_busy.arrive_and_wait();  // one thread each
        ++done;
      });
    REQUIRE(test_process::eventually([&] { return done == threads; },
                                     std::chrono::seconds(20)));
    const double peak = load::resident_mib();
    const auto idle = std::chrono::steady_clock::now();
    // The tuning keeps freed blocks in the heap: without the return, they
    // would stay resident (issue 50: 3.5x a node's RSS before a load).
    bool back = test_process::eventually(
        [&] {
          return pool.threads() == 0 && lp::detail::memory_returns() > returns_before &&
                 load::resident_mib() < before + 16;
        },
        std::chrono::seconds(20));
    const auto waves = lp::detail::memory_returns() - returns_before;
    MESSAGE("RSS before " << before << " MiB, after the burst " << peak << " MiB, "
                          << load::resident_mib() << " MiB " << load::seconds_since(idle)
                          << " s later; memory given back " << waves << " times");
    CHECK(peak > before + 64);
    CHECK(back);
    // Once for the wave of 32 departures, not once a thread.
    CHECK(waves >= 1);
    CHECK(waves <= 3);
  }

  TEST_CASE("8 threads x 10,000 calls: each answered once, the count exact") {
    constexpr long threads = 8, per_thread = 10'000, ids = threads * per_thread;
    lp::program p("load_threads");
    auto l = p.add_node<load::Ledger>("ledger", ids);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto ledger = running.client(l);

    auto start = std::chrono::steady_clock::now();
    std::vector<load::replies> answers(threads, load::replies(ids));
    std::vector<double> slowest(threads, 0.0);  // seconds, per thread
    std::vector<std::thread> callers;
    for (long t = 0; t < threads; ++t)
      callers.emplace_back([&, t] {
        auto& mine = answers[static_cast<std::size_t>(t)];
        auto& worst = slowest[static_cast<std::size_t>(t)];
        for (long id = t * per_thread; id < (t + 1) * per_thread; ++id) {
          auto sent = std::chrono::steady_clock::now();
          try {
            mine.record(id, ledger.add(id));
          } catch (const std::exception& e) {
            mine.failed(e.what());
          }
          worst = std::max(worst, load::seconds_since(sent));
        }
      });
    for (auto& caller : callers) caller.join();
    MESSAGE(ids << " sync calls in " << load::seconds_since(start) << " s, the slowest "
                << *std::max_element(slowest.begin(), slowest.end()) * 1000
                << " ms; threads " << load::threads_now() << ", sockets "
                << load::sockets_now());

    for (long t = 1; t < threads; ++t)
      answers[0].merge(answers[static_cast<std::size_t>(t)]);
    answers[0].check(ids);
    load::check_ledger(ledger, ids);
  }

  TEST_CASE("10,000 futures outstanding at once: each answered once") {
    constexpr long ids = 10'000;
    lp::program p("load_futures");
    auto l = p.add_node<load::Ledger>("ledger", ids);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto ledger = running.client(l);

    auto start = std::chrono::steady_clock::now();
    load::replies answers(ids);
    load::burst(ledger, 0, ids, answers);
    MESSAGE(ids << " futures in " << load::seconds_since(start) << " s; threads "
                << load::threads_now() << ", sockets " << load::sockets_now());

    answers.check(ids);
    load::check_ledger(ledger, ids);
  }

  TEST_CASE("the resident set stays flat from one burst of 10,000 futures to the next") {
    constexpr long per_burst = 10'000, bursts = 3, ids = per_burst * bursts;
    lp::program p("load_memory");
    auto l = p.add_node<load::Ledger>("ledger", ids);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto ledger = running.client(l);

    // The first burst warms up: connections, threads, allocator arenas.
    load::replies answers(ids);
    std::vector<double> mib;
    double before = load::resident_mib();
    for (long b = 0; b < bursts; ++b) {
      auto start = std::chrono::steady_clock::now();
      load::burst(ledger, b * per_burst, per_burst, answers);
      mib.push_back(load::resident_mib());
      MESSAGE("burst " << b + 1 << ": " << load::seconds_since(start) << " s, RSS "
                       << mib.back() << " MiB (before the first: " << before
                       << " MiB); threads " << load::threads_now() << ", sockets "
                       << load::sockets_now());
    }
    answers.check(ids);
    load::check_ledger(ledger, ids);

    double growth = mib[2] - mib[1];
    MESSAGE("RSS after bursts 1, 2, 3: " << mib[0] << ", " << mib[1] << ", " << mib[2]
                                         << " MiB; growth from 2 to 3: " << growth
                                         << " MiB");
    if (load::under_sanitizer)
      MESSAGE("the RSS bound is not checked under a sanitizer");
    else
      CHECK(growth < 32.0);
  }

  TEST_CASE("a thread pool's idle threads retire, and it grows again when work comes") {
    lp::detail::thread_pool pool(64, std::chrono::milliseconds(100));
    std::mutex gate;
    std::unique_lock closed(gate);
    std::atomic<int> done{0};
    for (int i = 0; i < 32; ++i)
      pool.enqueue([&] {
        std::lock_guard pass(gate);
        ++done;
      });
    CHECK(test_process::eventually([&] { return pool.threads() == 32; },
                                   std::chrono::seconds(5)));  // each job blocked
    closed.unlock();
    CHECK(test_process::eventually([&] { return done == 32 && pool.threads() == 0; },
                                   std::chrono::seconds(5)));
    std::promise<void> ran;
    pool.enqueue([&] { ran.set_value(); });
    CHECK(ran.get_future().wait_for(std::chrono::seconds(10)) ==
          std::future_status::ready);
  }

  TEST_CASE("after 1,000 futures the process's threads return to where they were") {
    lp::program p("load_threads");
    auto l = p.add_node<load::Ledger>("ledger", 1001);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto ledger = running.client(l);
    ledger.add(0);  // the first connection and the server's first thread
    long before = load::threads_now();
    load::replies answers(1001);
    load::burst(ledger, 1, 1000, answers);
    long peak = load::threads_now();
    CHECK(ledger.total() == 1001);
    // Idle call-pool and server threads retire 2 s after their last job, and
    // a parked keep-alive connection holds none: every thread the burst
    // started goes, however slow the machine (the bound is on time only).
    bool back = test_process::eventually([&] { return load::threads_now() <= before; },
                                         std::chrono::seconds(30));
    MESSAGE("threads before " << before << ", after the burst " << peak << ", now "
                              << load::threads_now());
    CHECK(back);
  }

  TEST_CASE(
      "10,000 outstanding futures: threads and memory stay bounded, each answered") {
    // Fewer under a sanitizer, whose per-thread and per-allocation costs
    // would make the test slow; the bounds are the same.
    constexpr long count = load::under_sanitizer ? 2'000 : 10'000;
    constexpr auto busy = static_cast<long>(lp::detail::call_pool_busy);
    lp::program p("load_bounded");
    auto l = p.add_node<load::Ledger>("ledger", count);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto ledger = running.client(l);
    CHECK(ledger.total() == 0);  // serving, connected
    long before = load::threads_now();
    double rss_before = load::resident_mib();

    // Samples, every 2 ms for 60 s at most, while the futures are
    // outstanding: the call pool's threads (the library's own count, which
    // docs/concepts.md bounds by call_pool_busy whatever the count), the
    // process's threads and its resident set, for the message.
    std::atomic<bool> done{false};
    long pool_peak = 0, peak = before;
    double rss_peak = rss_before;
    std::thread sampler([&] {
      for (int i = 0; i < 30'000 && !done; ++i) {
        pool_peak =
            std::max(pool_peak, static_cast<long>(lp::detail::call_pool().threads()));
        peak = std::max(peak, load::threads_now());
        rss_peak = std::max(rss_peak, load::resident_mib());
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    auto start = std::chrono::steady_clock::now();
    std::vector<std::future<long>> pending;
    pending.reserve(count);
    for (long id = 0; id < count; ++id) pending.push_back(ledger.async.add(id));
    double issued = load::seconds_since(start);
    load::replies answers(count);
    for (long id = 0; id < count; ++id) {
      try {
        answers.record(id, pending[static_cast<std::size_t>(id)].get());
      } catch (const std::exception& e) {
        answers.failed(e.what());
      }
    }
    double took = load::seconds_since(start);
    done = true;
    sampler.join();
    answers.check(count);
    load::check_ledger(ledger, count);
    // Every call of the burst had its own connection while in flight, and
    // the client pools them: the node holds at most one per call that was
    // in flight at once, and one for this question.
    auto connections =
        load::open_connections(running.urls().at("ledger"), running.secret());
    // Idle pool and server threads retire 2 s after their last job, parked
    // connections hold none: once they have, the process holds no thread
    // the burst started, however many futures it made.
    bool retired = test_process::eventually([&] { return load::threads_now() <= before; },
                                            std::chrono::seconds(30));
    MESSAGE(count << " futures: issued in " << issued << " s, all answered in " << took
                  << " s; call pool threads at most " << pool_peak << "; process threads "
                  << before << " before, peak " << peak << ", " << load::threads_now()
                  << " now; node connections " << connections << "; RSS before "
                  << rss_before << " MiB, peak " << rss_peak << " MiB (+"
                  << rss_peak - rss_before << ")");
    CHECK(pool_peak <= busy);
    CHECK(connections <= busy + 1);
    CHECK(retired);
    // Each queued future holds its encoded call and its shared state: a few
    // hundred bytes, not a thread's stack.
    if (load::under_sanitizer)
      MESSAGE("the RSS bound is not checked under a sanitizer");
    else
      CHECK(rss_peak - rss_before < 64.0);
  }

  // More outstanding futures than the pool runs at once, each to a method
  // that itself waits on futures: those go ahead of the queue
  // (util/thread_pool.hpp), or every pool slot would wait on the relay, and
  // the relay on a queued future, until the deadlines.
  template <class Policy>
  void nested_futures_complete() {
    lp::program p("load_nested");
    auto c = p.add_node<t::Counter>("counter");
    auto r = p.add_node<load::Relay>("relay", c);
    auto running = lp::launch<Policy>(p);
    // Without the urgent path the 192 calls deadlock for certain (every pool
    // slot waits on the relay): a deadline far above their time, however
    // slow the machine, tells the two apart without a bound on speed.
    auto relay = running.client(r).with_deadline(std::chrono::minutes(2));
    constexpr long calls = 3 * static_cast<long>(lp::detail::call_pool_busy);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::future<long>> pending;
    for (long i = 0; i < calls; ++i) pending.push_back(relay.async.fan(3));
    long failures = 0;
    for (auto& f : pending) {
      try {
        f.get();
      } catch (const std::exception& e) {
        if (failures++ == 0) MESSAGE("first failure: " << e.what());
      }
    }
    double took = load::seconds_since(start);
    MESSAGE(calls << " futures of a method that waits on 3 futures each: " << took
                  << " s");
    CHECK(failures == 0);
    CHECK(running.client(c).get() == 3 * calls);
  }

  TEST_CASE("futures of a method that waits on futures never wait behind the queue") {
    SUBCASE("over HTTP") {
      nested_futures_complete<lp::test_multi_threading>();
    }
    SUBCASE("direct calls") {
      nested_futures_complete<lp::direct_calls<lp::test_multi_threading>>();
    }
  }
}
