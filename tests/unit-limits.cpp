// Hostile connections (docs/protocol.md, "Limits"): peers that trickle their
// requests are cut off within the bounds while others are served, the
// server's threads follow its connections back down, and a flood past the
// connection cap is answered 503 without costing the node its memory or its
// file descriptors; a stopping server refuses new connections. Loopback only; every loop is bounded in count and time,
// and every socket is closed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <launchpad/detail/serve/listener.hpp>

#include "command.hpp"
#include "process_figures.hpp"
#include "services.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LIMITS_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LIMITS_UNDER_SANITIZER 1
#endif
#endif

namespace limits {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

#ifdef LIMITS_UNDER_SANITIZER
constexpr bool under_sanitizer = true;
#else
constexpr bool under_sanitizer = false;
#endif

using figures::resident_mib;
using figures::seconds_since;
using figures::sockets_now;
using figures::threads_now;

// The files this process may open (ulimit -n).
long open_files_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY)
    return 1 << 20;
  return static_cast<long>(files.rlim_cur);
}

int port_of(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

// A client socket on the loopback; closed with the object.
struct peer {
  explicit peer(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  peer(peer&& other) noexcept
      : fd(std::exchange(other.fd, -1)),
        got(std::move(other.got)),
        opened(other.opened),
        ended(other.ended),
        closed(other.closed) {}
  peer& operator=(peer&&) = delete;
  ~peer() { close(); }

  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  bool send(std::string_view bytes) {
    return fd >= 0 && ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                          static_cast<ssize_t>(bytes.size());
  }
  // Reads what has come, without waiting; notes when the server closed.
  void take() {
    if (fd < 0 || closed) return;
    char buffer[4096];
    for (int i = 0; i < 64; ++i) {
      ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        got.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        closed = true;
        ended = clock::now();
      }
      return;
    }
  }
  // Waits up to `limit` for the server to answer and close.
  void wait_closed(std::chrono::milliseconds limit) {
    auto until = clock::now() + limit;
    while (fd >= 0 && !closed && clock::now() < until) {
      pollfd watched{fd, POLLIN, 0};
      ::poll(&watched, 1, 50);
      take();
    }
  }

  int fd = -1;
  std::string got;
  clock::time_point opened = clock::now(), ended{};
  bool closed = false;
};

// Reads every peer as its bytes come, until each has been closed by the
// server or `limit` has passed, so that each peer's `ended` is when it was
// closed.
void wait_all_closed(std::vector<peer>& peers, std::chrono::milliseconds limit) {
  auto until = clock::now() + limit;
  std::vector<pollfd> watched;
  for (;;) {
    watched.clear();
    for (auto& p : peers)
      if (p.fd >= 0 && !p.closed) watched.push_back({p.fd, POLLIN, 0});
    if (watched.empty() || clock::now() >= until) return;
    ::poll(watched.data(), watched.size(), 20);
    for (auto& p : peers) p.take();
  }
}

// Opens peers, up to `count`, fewer only if connect fails.
std::vector<peer> open_peers(int port, long count) {
  std::vector<peer> peers;
  peers.reserve(static_cast<std::size_t>(count));
  for (long i = 0; i < count; ++i) {
    peer p(port);
    if (p.fd < 0) break;
    peers.push_back(std::move(p));
  }
  return peers;
}

// Calls the counter every few milliseconds on a thread of its own until
// stopped; keeps each call's time.
struct steady_caller {
  explicit steady_caller(lp::client<t::Counter>& counter)
      : thread([this, &counter] {
          while (!stop) try {
              auto sent = clock::now();
              counter.add(1);
              millis.push_back(seconds_since(sent) * 1000);
              done_at.push_back(clock::now());
              std::this_thread::sleep_for(5ms);  // pacing, not synchronisation
            } catch (const std::exception& e) {
              if (failures++ == 0) first_failure = e.what();
            }
        }) {}
  ~steady_caller() { finish(); }
  void finish() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  double percentile(double q) {
    if (millis.empty()) return 1e9;
    auto sorted = millis;
    std::sort(sorted.begin(), sorted.end());
    return sorted[std::min(
        sorted.size() - 1,
        static_cast<std::size_t>(q * static_cast<double>(sorted.size())))];
  }

  std::atomic<bool> stop{false};
  std::vector<double> millis;
  std::vector<clock::time_point> done_at;  // when each call's reply came
  long failures = 0;
  std::string first_failure;
  std::thread thread;  // last: it uses the members above
};

// errno of a connect to 127.0.0.1:port, or to the unix socket at `path`;
// 0 if it connected (the connection is closed at once).
int connect_error(int port, const std::string& path = {}) {
  int fd = ::socket(path.empty() ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int result;
  if (path.empty()) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    result = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  } else {
    sockaddr_un to{};
    to.sun_family = AF_UNIX;
    path.copy(to.sun_path, sizeof to.sun_path - 1);
    result = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  int error = result == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

const std::string request_head =
    "POST /lp/v1/call/add HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
    "application/json\r\n"
    "Content-Length: 3\r\nX-Padding: ";

}  // namespace limits

TEST_SUITE("limits") {
  using namespace limits;

  TEST_CASE(
      "a new connection's request that came within its first second is answered, "
      "however late a thread gets to it") {
    // One thread: while it runs a slow request, the other connection's
    // request waits for it past the second a new connection may stay silent.
    lp::detail::listener server(lp::detail::server_limits{.max_threads = 1});
    auto answer = [](auto&, auto& reply) { reply.set_content("{}", "application/json"); };
    server.routes().post("/slow", [answer](auto& request, auto& reply) {
      std::this_thread::sleep_for(1500ms);
      answer(request, reply);
    });
    server.routes().post("/quick", answer);
    int port = server.start("127.0.0.1", 0);
    REQUIRE(port > 0);
    peer quiet(port);  // silent: it parks, its first request due within 1 s
    std::this_thread::sleep_for(100ms);
    peer busy(port);
    REQUIRE(busy.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
    std::this_thread::sleep_for(100ms);
    auto sent = clock::now();
    REQUIRE(quiet.send("POST /quick HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
    auto until = clock::now() + 10s;
    while (!quiet.got.ends_with("{}") && !quiet.closed && clock::now() < until) {
      pollfd watched{quiet.fd, POLLIN, 0};
      ::poll(&watched, 1, 50);
      quiet.take();
    }
    MESSAGE("answered " << seconds_since(sent) << " s after it was sent");
    CHECK(quiet.got.starts_with("HTTP/1.1 200"));
    CHECK_FALSE(quiet.closed);
  }

  TEST_CASE(
      "200 peers sending a header byte every 2 s are closed at the 10 s bound; calls go "
      "on") {
    constexpr long tricklers = 200;
    constexpr double bound = 10.0;  // the default --lp_header_timeout_secs
    lp::program p("limits_trickle");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    counter.add(1);
    int port = port_of(running.urls().at("counter"));

    auto peers = open_peers(port, tricklers);
    REQUIRE(static_cast<long>(peers.size()) == tricklers);
    for (auto& peer : peers) {
      peer.opened = clock::now();
      peer.send(request_head.substr(0, 1));
    }
    steady_caller caller(counter);
    long peak_threads = 0;
    std::size_t sent = 1;
    auto start = clock::now(), next_byte = start + 2s;
    long open = tricklers;
    while (open > 0 && seconds_since(start) < bound + 10) {
      std::this_thread::sleep_for(50ms);
      peak_threads = std::max(peak_threads, threads_now());
      bool trickle = clock::now() >= next_byte;
      if (trickle) next_byte += 2s;
      open = 0;
      for (auto& peer : peers) {
        peer.take();
        if (peer.closed) continue;
        if (trickle && !peer.send(request_head.substr(sent % request_head.size(), 1))) {
          peer.closed = true;
          peer.ended = clock::now();
          continue;
        }
        ++open;
      }
      if (trickle) ++sent;
    }
    caller.finish();

    double earliest = 1e9, latest = 0;
    long answered_408 = 0, answered_other = 0;
    auto first_closed = clock::time_point::max();
    for (auto& peer : peers) {
      if (!peer.closed) continue;
      first_closed = std::min(first_closed, peer.ended);
      double after = std::chrono::duration<double>(peer.ended - peer.opened).count();
      earliest = std::min(earliest, after);
      latest = std::max(latest, after);
      if (peer.got.starts_with("HTTP/1.1 408"))
        ++answered_408;
      else if (!peer.got.empty())
        ++answered_other;
    }
    // Calls answered while every trickler was still open: had the tricklers
    // held the server's threads, the calls would have waited for the header
    // bound, and none would be.
    auto served_meanwhile = std::count_if(caller.done_at.begin(), caller.done_at.end(),
                                          [&](auto t) { return t < first_closed; });
    MESSAGE(tricklers << " tricklers: closed " << earliest << " to " << latest
                      << " s after their first byte, " << answered_408
                      << " answered 408; " << caller.millis.size() << " calls, "
                      << served_meanwhile << " before the first trickler was closed, p50 "
                      << caller.percentile(0.50) << " ms, p99 " << caller.percentile(0.99)
                      << " ms, max " << caller.percentile(1.0) << " ms; threads at most "
                      << peak_threads);
    CHECK(open == 0);
    CHECK(earliest >= bound - 0.5);  // by the header bound, not by something sooner
    CHECK(latest <= bound + (under_sanitizer ? 5.0 : 2.0));
    CHECK(answered_408 == tricklers);
    CHECK(answered_other == 0);  // never 400
    INFO("first failure: " << caller.first_failure);
    CHECK(caller.failures == 0);
    // A call every 5 ms for 9.5 s or more: hundreds, unless something
    // starved them; their latency is in the message above, not a bound
    // that a loaded machine could break.
    CHECK(served_meanwhile >= 10);
  }

  TEST_CASE("a half request gets 408 at the header bound; a trickled body is cut off") {
    lp::program p("limits_408");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(
        p, {.header_timeout_secs = 1, .min_rate_kib_per_sec = 1});
    int port = port_of(running.urls().at("counter"));

    // Headers that never end: 408 request_timeout after 1 s, not 400.
    peer half(port);
    REQUIRE(half.send("POST /lp/v1/call/add HTTP/1.1\r\nHost: x\r\n"));
    half.wait_closed(5s);
    CHECK(half.closed);
    double after = std::chrono::duration<double>(half.ended - half.opened).count();
    CHECK(after >= 0.9);
    CHECK(after < 3.0);
    CHECK(half.got.starts_with("HTTP/1.1 408 "));
    CHECK(half.got.find("\"request_timeout\"") != std::string::npos);
    CHECK(half.got.find("--lp_header_timeout_secs") != std::string::npos);
    CHECK(half.got.find("\"node\":\"counter\"") != std::string::npos);

    // A body of 1 MB promised, a byte every 200 ms sent: at 1 KiB/s after
    // the 1 s start, it is cut off long before it could end.
    peer slow(port);
    REQUIRE(
        slow.send("POST /lp/v1/call/add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                  running.secret() + "\r\nContent-Length: 1000000\r\n\r\n["));
    auto start = clock::now();
    for (int i = 0; i < 40 && !slow.closed; ++i) {
      std::this_thread::sleep_for(200ms);
      slow.take();
      if (!slow.closed && !slow.send("1")) break;
    }
    slow.wait_closed(2s);
    CHECK(slow.closed);
    CHECK(seconds_since(start) < 5.0);
    CHECK(slow.got.starts_with("HTTP/1.1 408 "));
    CHECK(slow.got.find("--lp_min_rate_kib_per_sec") != std::string::npos);

    // The node serves on.
    CHECK(running.client(c).add(2) == 2);
  }

  TEST_CASE("a body declared over the limit gets 413 at once, before any of it is read") {
    lp::program p("limits_413");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p, {.max_body_mb = 1});
    int port = port_of(running.urls().at("counter"));

    // 2 GiB declared, 1,000 bytes sent: the answer must not wait for the
    // rest (it used to: 408 after 5 s). Only a node that decided from the
    // head alone can answer 413: it never gets the body. So that, not a
    // time, is what is checked; the time is in the message.
    peer big(port);
    auto sent = clock::now();
    REQUIRE(big.send(
        "POST /lp/v1/call/add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
        running.secret() +
        "\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n" +
        std::string(1000, ' ')));
    for (auto until = sent + 30s; big.got.find("\r\n\r\n") == std::string::npos &&
                                  !big.closed && clock::now() < until;) {
      pollfd watched{big.fd, POLLIN, 0};
      ::poll(&watched, 1, 10);
      big.take();
    }
    double millis = seconds_since(sent) * 1000;
    MESSAGE("2 GiB declared, 1,000 bytes sent: answered after " << millis << " ms");
    INFO(big.got);
    CHECK(big.got.starts_with("HTTP/1.1 413 "));
    big.wait_closed(3s);
    CHECK(big.got.find("\"payload_too_large\"") != std::string::npos);
    CHECK(big.got.find("--lp_max_body_mb") != std::string::npos);
    CHECK(big.got.find("\"node\":\"counter\"") != std::string::npos);
    CHECK(big.closed);  // the unread body cannot be taken for a request

    // A length too long to be a number is over any limit, too.
    peer huge(port);
    REQUIRE(
        huge.send("POST /lp/v1/call/add HTTP/1.1\r\nHost: x\r\nContent-Length: "
                  "99999999999999999999999\r\n\r\n"));
    huge.wait_closed(3s);
    CHECK(huge.got.starts_with("HTTP/1.1 413 "));

    CHECK(running.client(c).add(2) == 2);
  }

  TEST_CASE(
      "5,000 connections opened and closed: the threads are back near the floor in 10 "
      "s") {
    // Up to 500 open at once, within this process's file descriptors (each
    // takes two: ours and the server's).
    const long total = under_sanitizer ? 2000 : 5000;
    const long at_once = std::min(500L, (open_files_limit() - 100) / 3);
    lp::program p("limits_threads");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    counter.add(1);
    int port = port_of(running.urls().at("counter"));
    long floor = threads_now();

    long opened = 0, served = 0, peak = 0;
    auto start = clock::now();
    while (opened < total && seconds_since(start) < 40) {
      auto batch = open_peers(port, std::min(at_once, total - opened));
      if (batch.empty()) break;
      opened += static_cast<long>(batch.size());
      for (auto& peer : batch) peer.send("GET /lp/v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
      for (auto& peer : batch) {
        auto until = clock::now() + 5s;
        while (peer.got.find("\r\n\r\n") == std::string::npos && !peer.closed &&
               clock::now() < until) {
          pollfd watched{peer.fd, POLLIN, 0};
          ::poll(&watched, 1, 50);
          peer.take();
        }
        served += peer.got.starts_with("HTTP/1.1 200");
      }
      peak = std::max(peak, threads_now());
    }  // each batch closes here
    auto closed = clock::now();
    bool back = test_process::eventually([&] { return threads_now() <= floor + 8; }, 10s);
    MESSAGE(opened << " connections (" << at_once << " at once) in "
                   << seconds_since(start) - seconds_since(closed) << " s, " << served
                   << " answered; threads: floor " << floor << ", peak " << peak << ", "
                   << threads_now() << " " << seconds_since(closed)
                   << " s after the last closed");
    CHECK(opened == total);
    CHECK(served == total);
    // The pool grew under the burst (a connection holds a thread only while
    // busy, so not to one per connection), so its return below means something.
    CHECK(peak > floor + 16);
    CHECK(back);
    CHECK(counter.add(1) == 2);
  }

  TEST_CASE(
      "a flood past the connection cap: 503 at once, bounded descriptors, serving "
      "after") {
    constexpr long cap = 64;
    const long flood =
        std::min(under_sanitizer ? 1000L : 2000L, open_files_limit() - 300);
    lp::program p("limits_flood");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p, {.max_connections = cap});
    auto counter = running.client(c);
    counter.add(1);
    int port = port_of(running.urls().at("counter"));
    long threads_before = threads_now(), sockets_before = sockets_now();
    double mib_before = resident_mib();

    auto start = clock::now();
    auto peers = open_peers(port, flood);
    double opening = seconds_since(start);
    // Ours are open; the node holds at most `cap` of its own.
    long threads_during = threads_now(), sockets_during = sockets_now();
    long refused = 0;
    double slowest_refusal = 0;
    std::vector<double> refusal_seconds;
    wait_all_closed(peers, 5s);
    long still_open = 0;
    for (auto& peer : peers) {
      still_open += !peer.closed;
      if (!peer.got.starts_with("HTTP/1.1 503 ")) continue;
      ++refused;
      refusal_seconds.push_back(
          std::chrono::duration<double>(peer.ended - peer.opened).count());
      slowest_refusal = std::max(slowest_refusal, refusal_seconds.back());
    }
    bool overloaded =
        !peers.empty() && std::any_of(peers.begin(), peers.end(), [](auto& peer) {
          return peer.got.find("\"overloaded\"") != std::string::npos &&
                 peer.got.find("--lp_max_connections") != std::string::npos;
        });
    double mib_during = resident_mib();
    long count = static_cast<long>(peers.size());
    peers.clear();  // closes ours

    MESSAGE(count << " connections opened in " << opening << " s against a cap of " << cap
                  << ": " << refused << " answered 503, the slowest " << slowest_refusal
                  << " s after connecting; threads " << threads_before << " -> "
                  << threads_during << ", sockets " << sockets_before << " -> "
                  << sockets_during << " (" << count << " ours); RSS " << mib_before
                  << " -> " << mib_during << " MiB");
    CHECK(count == flood);
    CHECK(refused >= flood / 2);
    // Answered by the accepting thread, one after another, at once: not after
    // the second an admitted connection may idle, nor after a thread's start.
    std::sort(refusal_seconds.begin(), refusal_seconds.end());
    double median_refusal =
        refusal_seconds.empty() ? 1e9 : refusal_seconds[refusal_seconds.size() / 2];
    MESSAGE("503 after " << median_refusal << " s (median), " << slowest_refusal
                         << " s (slowest)");
    // Times that a sanitizer on a busy machine stretches past any bound that
    // still means "at once": there, the thread and socket counts below must
    // show it (no thread per refused connection).
    if (!under_sanitizer) {
      CHECK(median_refusal < 1.0);
      CHECK(slowest_refusal < 3.0);
    }
    CHECK(still_open == 0);  // the ones let in closed after their idle second
    CHECK(overloaded);
    CHECK(threads_during <= threads_before + cap + 8);
    CHECK(sockets_during <= sockets_before + count + cap + 8);
    if (!under_sanitizer) CHECK(mib_during - mib_before < 64.0);
    // Serving again, with its threads back down.
    auto flood_over = clock::now();
    bool serving = test_process::eventually(
        [&] {
          try {
            return counter.add(1) >= 2;
          } catch (const std::exception&) {
            return false;
          }
        },
        5s);
    MESSAGE("serving again " << seconds_since(flood_over) << " s after the flood");
    CHECK(serving);
    CHECK(test_process::eventually([&] { return threads_now() <= threads_before + 4; },
                                   10s));
  }
}

TEST_SUITE("limits") {
  using namespace limits;

  TEST_CASE(
      "4,096 idle keep-alive connections hold no thread each, are served again, and "
      "close at stop") {
    const long wanted =
        std::min(under_sanitizer ? 1000L : 4096L, (open_files_limit() - 100) / 3);
    lp::program p("limits_idle");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    running.client(c).add(1);
    int port = port_of(running.urls().at("counter"));
    long floor = threads_now();

    // Each asks once and stays; a reply's end is its head's end here (the
    // health body is sent with it, and read below whole or not at all).
    auto ask_all = [&](std::vector<peer>& peers) {
      for (auto& peer : peers) {
        peer.got.clear();
        peer.send("GET /lp/v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
      }
      long answered = 0;
      auto until = clock::now() + 20s;
      for (auto& peer : peers) {
        while (!peer.got.ends_with("}") && !peer.closed && clock::now() < until) {
          pollfd watched{peer.fd, POLLIN, 0};
          ::poll(&watched, 1, 50);
          peer.take();
        }
        answered += peer.got.starts_with("HTTP/1.1 200") && !peer.closed;
      }
      return answered;
    };
    // Opened and asked in batches: a new connection silent for a second is
    // closed (protocol::first_request_seconds), and opening them all first
    // takes longer than that under a sanitizer.
    std::vector<peer> peers;
    peers.reserve(static_cast<std::size_t>(wanted));
    long answered = 0, peak = 0;
    while (static_cast<long>(peers.size()) < wanted) {
      auto batch =
          open_peers(port, std::min(128L, wanted - static_cast<long>(peers.size())));
      if (batch.empty()) break;
      answered += ask_all(batch);
      peak = std::max(peak, threads_now());
      for (auto& peer : batch) peers.push_back(std::move(peer));
    }
    long count = static_cast<long>(peers.size());
    CHECK(count == wanted);
    CHECK(answered == count);
    // Idle now: their threads go back to the pool, and the pool lets them go.
    bool released =
        test_process::eventually([&] { return threads_now() <= floor + 8; }, 10s);
    long idle_threads = threads_now();
    for (auto& peer : peers) peer.take();
    long still_open =
        std::count_if(peers.begin(), peers.end(), [](auto& p) { return !p.closed; });
    MESSAGE(count << " idle connections: threads floor " << floor << ", peak " << peak
                  << ", idle " << idle_threads << "; " << still_open << " still open");
    CHECK(released);
    CHECK(still_open == count);

    // Parked connections wake for their next request, past the second a new
    // connection may stay silent.
    CHECK(ask_all(peers) == count);

    // A stop does not wait out their keep-alive (30 s): each sees its end.
    std::this_thread::sleep_for(100ms);  // parked again
    auto stopping = clock::now();
    CHECK(running.stop());
    double stop_seconds = seconds_since(stopping);
    wait_all_closed(peers, 5s);
    long ended =
        std::count_if(peers.begin(), peers.end(), [](auto& p) { return p.closed; });
    MESSAGE("stopped in " << stop_seconds << " s; " << ended << " of " << count
                          << " saw their end");
    CHECK(stop_seconds < 5.0);
    CHECK(ended == count);
  }
}

TEST_SUITE("limits") {
  using namespace limits;

  TEST_CASE(
      "a stopping server refuses new connections at once, on TCP and on its unix "
      "socket, while it finishes the calls it runs") {
    // Taken by the kernel and then reset at the listening socket's close, a
    // connection made during the stop was a failed TLS handshake to its
    // caller, who then failed its node (the Slurm suite on d6f2d8d); refused,
    // it tells the caller to ask the launch whether the program stops.
    test_process::scratch dir;
    auto path = dir.path + "/server.sock";
    lp::detail::listener server;
    std::atomic<bool> running{false}, release{false};
    server.routes().post("/slow", [&](auto&, auto& reply) {
      running = true;
      auto until = clock::now() + 20s;
      while (!release && clock::now() < until) std::this_thread::sleep_for(5ms);
      reply.set_content("{}", "application/json");
    });
    REQUIRE(server.listen_locally(path));
    int port = server.start("127.0.0.1", 0);
    REQUIRE(port > 0);
    CHECK(connect_error(port) == 0);
    CHECK(connect_error(0, path) == 0);

    peer busy(port);
    REQUIRE(busy.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
    REQUIRE(test_process::eventually([&] { return running.load(); }, 10s));
    std::atomic<bool> stopped{false};
    std::thread stopping([&] {
      server.stop();
      stopped = true;
    });
    // The stop waits for the slow call; new connections are refused
    // meanwhile (or find no socket file, once it is gone). The two
    // listeners close one after the other: each is waited for (under TSan
    // the unix socket's close came after the TCP refusal was seen).
    bool tcp_refused =
        test_process::eventually([&] { return connect_error(port) == ECONNREFUSED; }, 5s);
    bool unix_refused = test_process::eventually(
        [&] {
          int error = connect_error(0, path);
          return error == ECONNREFUSED || error == ENOENT;
        },
        5s);
    CHECK(tcp_refused);
    CHECK(unix_refused);
    CHECK_FALSE(stopped.load());  // refused while the stop still waits for the slow call
    release = true;
    stopping.join();
    // The call that ran was answered.
    busy.wait_closed(10s);
    CHECK(busy.got.starts_with("HTTP/1.1 200"));
  }
}
