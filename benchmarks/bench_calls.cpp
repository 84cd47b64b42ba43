// Call benchmarks of launchpad against baselines measured in the same run.
//
//   bench_calls [--quick] [--same-host]
//   bench_calls --handshake-node    a node process of 9 and 10 (run by its launcher)
//
// 1. one small sync call (long add(long)) through lp::client, against a raw
//    cpp-httplib server + client doing the same with JSON (nlohmann);
// 2. the same call from 8 client threads at once, against the raw server with
//    8 httplib clients;
// 3. a round trip of 1M float32 (std::vector<float> echo, taking its vector
//    by value), against a raw TCP echo of the same 4 MB over loopback; 3c
//    the same through a method that takes a const& and so copies 4 MB;
// 4. 1000 client.async.add(1) issued at once, then every .get(), against
//    1000 sequential sync calls;
// 5. 64 threads calling a batched method (LP_BATCHED) whose invocation costs
//    200 us, against the same method unbatched;
// 6. a small call without HTTP (lp::direct_calls<P>), against it over HTTP;
// 7. a small call over TLS (test_options::tls, as --lp_tls=on), against it
//    over plain HTTP;
// 8. the echo of 3 over TLS, against it over plain HTTP;
// 9. a new connection and a first small call on it, over TLS (its
//    handshake) against plain HTTP, to a node process of this program;
// 10. the small call of 1 to a node in another process, against a raw TCP
//    ping-pong of 64 bytes between two processes (the call goes over the
//    node's unix socket, as every call on one host does since issue 51);
// 11. process CPU per call when calls come 1 ms apart;
// 12. one host (alone with --same-host): the small call over the node's unix
//    socket against the same over loopback TCP (--lp_same_host=off) and a raw
//    64-byte unix ping-pong, the process CPU per call of both processes, and
//    4 MB and 64 MB float32 echoes (shared memory, and TCP), as std::vector
//    and as lp::tensor, against memcpy of the same bytes.
//
// The machine these run on is usually shared, so absolute figures drift from
// run to run; the ratios, measured side by side and interleaved, are what to
// compare. --quick cuts every iteration count by 10x (a smoke test).
// See benchmarks/README.md.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <latch>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/tls/context.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

struct Bench {
  long add(long x) { return total += x; }
  // By value, the vector is the node's: moved in and sent back from where
  // it is (docs/concepts.md). echo_copy copies it, as a const& must.
  std::vector<float> echo(std::vector<float> values) { return values; }
  std::vector<float> echo_copy(const std::vector<float>& values) { return values; }
  // Rows 12f-g: a tensor that came through shared memory is read in place.
  lp::tensor<float> echo_tensor(lp::tensor<float> values) { return values; }
  long total = 0;
};
LP_SERVICE(Bench, add, echo, echo_copy, echo_tensor);

// A model whose every invocation has a fixed cost (a kernel launch, a
// forward pass over a batch), offered batched and unbatched.
struct Model {
  static void invocation_cost() {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  long infer(long x) {
    invocation_cost();
    return x + 1;
  }
  std::vector<long> infer_batched(std::vector<long> xs) {
    invocation_cost();
    for (auto& x : xs) ++x;
    return xs;
  }
};
LP_SERVICE(Model, infer, infer_batched);
LP_BATCHED(Model, infer_batched, 64, std::chrono::milliseconds(2));

namespace {

using steady = std::chrono::steady_clock;

double micros(steady::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}
double millis(steady::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}
double seconds(steady::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of the whole process (every thread: clients and servers alike,
// since they all run here). Less sensitive than wall time to other programs
// competing for the cores.
double cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  double upper = *middle;
  double lower = *std::max_element(values.begin(), middle);
  return (lower + upper) / 2;
}

// A failure of a baseline (or of a check) ends the run: the figures would lie.
struct bench_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& what) {
  throw bench_failure(what);
}

// CPU time of this process and of `others` (a launch's node processes, a
// ping-pong's child), in seconds: a call between processes costs in both.
// Each one's CPU-time clock, to the nanosecond (/proc/<pid>/stat counts the
// same time in 10 ms ticks).
double cpu_seconds_with(const std::vector<pid_t>& others) {
  double total = cpu_seconds();
  for (pid_t pid : others) {
    clockid_t clock{};
    timespec now{};
    if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &now) != 0)
      fail("cannot read the CPU time of process " + std::to_string(pid));
    total += static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
  }
  return total;
}

// --- Baseline for 1 and 2: cpp-httplib + nlohmann, JSON ------------------

class raw_http_server {
 public:
  raw_http_server() {
    // httplib's default pool has max(8, nproc - 1) threads, and every open
    // keep-alive connection holds one; leave room for 8 hammering clients
    // plus the latency client.
    server_.new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(std::size_t{1} << 30);  // default: 5 calls
    server_.set_keep_alive_timeout(5);
    server_.Post("/add", [this](const httplib::Request& req, httplib::Response& res) {
      try {
        auto args = nlohmann::json::parse(req.body);
        long x = args.at(0).get<long>();
        long result = total_.fetch_add(x) + x;
        res.set_content(nlohmann::json{{"result", result}}.dump(), "application/json");
      } catch (const std::exception& e) {
        res.status = 400;
        res.set_content(e.what(), "text/plain");
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ < 0) fail("raw HTTP server: cannot bind 127.0.0.1");
    listener_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 100000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (!server_.is_running()) fail("raw HTTP server: did not start listening");
  }
  raw_http_server(const raw_http_server&) = delete;
  raw_http_server& operator=(const raw_http_server&) = delete;
  ~raw_http_server() {
    server_.stop();
    if (listener_.joinable()) listener_.join();
  }

  int port() const { return port_; }

 private:
  httplib::Server server_;
  std::thread listener_;
  std::atomic<long> total_{0};
  int port_ = -1;
};

class raw_http_client {
 public:
  explicit raw_http_client(int port) : client_("127.0.0.1", port) {
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);
  }

  long add(long x) {
    auto body = nlohmann::json::array({x}).dump();
    auto result = client_.Post("/add", body, "application/json");
    if (!result) fail("raw HTTP call failed: " + httplib::to_string(result.error()));
    if (result->status != 200)
      fail("raw HTTP call: status " + std::to_string(result->status) + ": " +
           result->body);
    return nlohmann::json::parse(result->body).at("result").get<long>();
  }

 private:
  httplib::Client client_;
};

// --- Baseline for 3: a plain TCP echo of N bytes --------------------------

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Returns false on EOF before the first byte; throws on errors or a short read.
bool read_exactly(int fd, char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    auto got = ::recv(fd, data + done, size - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::string("raw TCP recv: ") + std::strerror(errno));
    if (got == 0) {
      if (done == 0) return false;
      fail("raw TCP recv: connection closed mid-message");
    }
    done += static_cast<std::size_t>(got);
  }
  return true;
}

void write_exactly(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    auto sent = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) fail(std::string("raw TCP send: ") + std::strerror(errno));
    done += static_cast<std::size_t>(sent);
  }
}

// One connection: reads `size` bytes and writes them back, until EOF.
class raw_tcp_echo {
 public:
  explicit raw_tcp_echo(std::size_t size) : size_(size) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    client_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0 || client_fd_ < 0) {
      close_fds();
      fail(std::string("raw TCP socket: ") + std::strerror(errno));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    auto* generic = reinterpret_cast<sockaddr*>(&address);
    // The kernel completes the connection before accept(), so the server
    // thread starts only once nothing here can fail.
    if (::bind(listen_fd_, generic, sizeof address) != 0 ||
        ::listen(listen_fd_, 1) != 0 ||
        ::getsockname(listen_fd_, generic, &length) != 0 ||
        ::connect(client_fd_, generic, sizeof address) != 0) {
      std::string why = std::strerror(errno);
      close_fds();
      fail("raw TCP echo: cannot connect over loopback: " + why);
    }
    set_nodelay(client_fd_);
    server_ = std::thread([this] { serve(); });
  }
  raw_tcp_echo(const raw_tcp_echo&) = delete;
  raw_tcp_echo& operator=(const raw_tcp_echo&) = delete;
  ~raw_tcp_echo() { finish(); }

  // One round trip: writes `out`, reads as many bytes into `in`.
  void round_trip(const char* out, char* in) {
    write_exactly(client_fd_, out, size_);
    if (!read_exactly(client_fd_, in, size_)) fail("raw TCP echo: the server closed");
  }

  // Closes the connection, joins the server thread and returns its error,
  // if it had one.
  std::string finish() {
    if (client_fd_ >= 0) ::shutdown(client_fd_, SHUT_RDWR);
    if (server_.joinable()) server_.join();
    close_fds();
    return error_;
  }

 private:
  void close_fds() {
    if (client_fd_ >= 0) ::close(client_fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    client_fd_ = listen_fd_ = -1;
  }

  void serve() {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      error_ = std::string("accept: ") + std::strerror(errno);
      return;
    }
    set_nodelay(fd);
    std::vector<char> buffer(size_);
    try {
      while (read_exactly(fd, buffer.data(), size_))
        write_exactly(fd, buffer.data(), size_);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    ::close(fd);
  }

  std::size_t size_;
  int listen_fd_ = -1;
  int client_fd_ = -1;
  std::thread server_;
  std::string error_;  // written by the server thread; read after join
};

// --- Benchmarks -----------------------------------------------------------

struct counts {
  int latency_rounds;     // 1: rounds, each a block of lp calls and a block of raw calls
  int latency_block;      //    calls per block
  int throughput_trials;  // 2: trials per system, alternating
  double throughput_seconds;  //    length of one trial
  int echo_rounds;            // 3: rounds, each 3's, 3c's and three raw trips
  int async_reps;             // 4: repetitions of the 1000-future burst
};

struct row {
  std::string name;
  double lp;
  double base;
  std::string goal;  // "<= 1.10", ">= 1.00" or ""
};

// 1. Median latency of one sync call; short blocks of lp and raw calls
// alternate, so both see the same competition for the cores. Also the
// process CPU time per call of each, and, in the same rounds, a 64-byte
// ping-pong over a plain TCP socket: the floor that any call over loopback
// pays on this machine.
std::vector<row> bench_latency(lp::client<Bench>& client, raw_http_client& raw,
                               const counts& n) {
  raw_tcp_echo ping(64);
  char out[64] = {}, in[64];
  for (int i = 0; i < 500; ++i)
    client.add(0), raw.add(0), ping.round_trip(out, in);  // warm up
  std::vector<double> lp_us, raw_us, floor;
  lp_us.reserve(static_cast<std::size_t>(n.latency_rounds * n.latency_block));
  raw_us.reserve(lp_us.capacity());
  double lp_cpu = 0, raw_cpu = 0;
  auto block_lp = [&] {
    auto cpu = cpu_seconds();
    for (int i = 0; i < n.latency_block; ++i) {
      auto start = steady::now();
      long r = client.add(0);
      lp_us.push_back(micros(steady::now() - start));
      if (r < 0) fail("lp add: negative total");
    }
    lp_cpu += cpu_seconds() - cpu;
  };
  auto block_raw = [&] {
    auto cpu = cpu_seconds();
    for (int i = 0; i < n.latency_block; ++i) {
      auto start = steady::now();
      long r = raw.add(0);
      raw_us.push_back(micros(steady::now() - start));
      if (r < 0) fail("raw add: negative total");
    }
    raw_cpu += cpu_seconds() - cpu;
  };
  double floor_cpu = 0;
  auto block_floor = [&] {
    auto cpu = cpu_seconds();
    for (int i = 0; i < n.latency_block; ++i) {
      auto start = steady::now();
      ping.round_trip(out, in);
      floor.push_back(micros(steady::now() - start));
    }
    floor_cpu += cpu_seconds() - cpu;
  };
  for (int round = 0; round < n.latency_rounds; ++round) {
    if (round % 2 == 0)
      block_lp(), block_raw();
    else
      block_raw(), block_lp();
    if (round % 4 == 0) block_floor();
  }
  if (auto error = ping.finish(); !error.empty())
    fail("raw TCP ping-pong server: " + error);
  double floor_us = median(floor);
  double calls = static_cast<double>(lp_us.size());
  double trips = static_cast<double>(floor.size());
  return {{"1 sync add(long), median us/call", median(lp_us), median(raw_us), "<= 1.10"},
          {"  process CPU us/call", lp_cpu / calls * 1e6, raw_cpu / calls * 1e6, ""},
          {"1f the same against the loopback floor", median(lp_us), floor_us, "<= 2.00"},
          {"  process CPU us/call (floor's)", lp_cpu / calls * 1e6,
           floor_cpu / trips * 1e6, ""}};
}

struct rate {
  double calls_per_second;
  double cpu_us_per_call;
  double cores_busy;  // process CPU time / wall time
};

// Runs `call(thread)` on `threads` threads for `length` seconds; the CPU
// counts this process's and that of `others` (a node's process).
rate hammer(int threads, double length, const std::function<void(int)>& call,
            const std::vector<pid_t>& others = {}) {
  std::atomic<long> calls{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::latch ready(threads + 1);
  std::atomic<bool> go{false};
  steady::time_point deadline;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      ready.count_down();
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      long mine = 0;
      try {
        while (steady::now() < deadline) call(t), ++mine;
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) error = e.what();
      }
      calls += mine;
    });
  ready.arrive_and_wait();
  auto cpu = cpu_seconds_with(others);
  auto start = steady::now();
  deadline = start + std::chrono::duration_cast<steady::duration>(
                         std::chrono::duration<double>(length));
  go.store(true, std::memory_order_release);
  for (auto& worker : workers) worker.join();
  auto elapsed = steady::now() - start;
  cpu = cpu_seconds_with(others) - cpu;
  if (failed) fail(error);
  auto total = static_cast<double>(calls);
  return {total / seconds(elapsed), cpu / total * 1e6, cpu / seconds(elapsed)};
}

// 2. Throughput of 8 threads calling one node; lp and raw trials alternate.
std::vector<row> bench_throughput(lp::client<Bench>& client, int raw_port,
                                  const counts& n, double& lp_cores, double& raw_cores) {
  constexpr int threads = 8;
  std::vector<std::unique_ptr<raw_http_client>> raws;
  for (int t = 0; t < threads; ++t)
    raws.push_back(std::make_unique<raw_http_client>(raw_port));
  auto lp_call = [&](int) { client.add(1); };
  auto raw_call = [&](int t) { raws[static_cast<std::size_t>(t)]->add(1); };
  // Warm up: open the pooled and the raw connections.
  hammer(threads, n.throughput_seconds / 2, lp_call);
  hammer(threads, n.throughput_seconds / 2, raw_call);
  std::vector<double> lp_rate, raw_rate, lp_cpu, raw_cpu, lp_busy, raw_busy;
  auto trial_lp = [&] {
    auto r = hammer(threads, n.throughput_seconds, lp_call);
    lp_rate.push_back(r.calls_per_second);
    lp_cpu.push_back(r.cpu_us_per_call);
    lp_busy.push_back(r.cores_busy);
  };
  auto trial_raw = [&] {
    auto r = hammer(threads, n.throughput_seconds, raw_call);
    raw_rate.push_back(r.calls_per_second);
    raw_cpu.push_back(r.cpu_us_per_call);
    raw_busy.push_back(r.cores_busy);
  };
  for (int trial = 0; trial < n.throughput_trials; ++trial) {
    if (trial % 2 == 0)
      trial_lp(), trial_raw();
    else
      trial_raw(), trial_lp();
  }
  lp_cores = median(lp_busy);
  raw_cores = median(raw_busy);
  return {{"2 add x 8 threads, calls/s", median(lp_rate), median(raw_rate), ">= 1.50"},
          {"  process CPU us/call", median(lp_cpu), median(raw_cpu), ""}};
}

// The 1M float32 (4 MB) that 3 and 8 echo.
constexpr std::size_t echo_count = std::size_t{1} << 20;

std::vector<float> echo_values() {
  std::vector<float> values(echo_count);
  for (std::size_t i = 0; i < echo_count; ++i)
    values[i] = static_cast<float>(i) * 0.001f - 17.25f;
  return values;
}

// 3. Round trip of 1M float32; each round one lp echo of each kind, in turns
// first, and three raw TCP echoes. 3c shows what the method's copy costs.
std::vector<row> bench_echo(lp::client<Bench>& client, const counts& n) {
  constexpr std::size_t count = echo_count;
  const std::vector<float> values = echo_values();
  const std::size_t bytes = count * sizeof(float);
  raw_tcp_echo raw(bytes);
  std::vector<char> back(bytes);
  auto raw_trip = [&] {
    raw.round_trip(reinterpret_cast<const char*>(values.data()), back.data());
  };
  // Warm up, and check both echo faithfully.
  if (client.echo(values) != values) fail("lp echo: the vector came back different");
  if (client.echo_copy(values) != values)
    fail("lp echo_copy: the vector came back different");
  raw_trip();
  if (std::memcmp(back.data(), values.data(), bytes) != 0)
    fail("raw TCP echo: the bytes came back different");
  std::vector<double> lp_ms, copy_ms, raw_ms;
  auto lp_trip = [&](bool copy) {
    auto start = steady::now();
    auto echoed = copy ? client.echo_copy(values) : client.echo(values);
    (copy ? copy_ms : lp_ms).push_back(millis(steady::now() - start));
    if (echoed.size() != count) fail("lp echo: wrong size");
  };
  for (int round = 0; round < n.echo_rounds; ++round) {
    lp_trip(round % 2 == 1);
    lp_trip(round % 2 == 0);
    // Several raw trips per round: they are short, and their median steadies.
    for (int k = 0; k < 3; ++k) {
      auto start = steady::now();
      raw_trip();
      raw_ms.push_back(millis(steady::now() - start));
    }
  }
  if (auto error = raw.finish(); !error.empty()) fail("raw TCP echo server: " + error);
  return {{"3 echo 1M float32, median ms/trip", median(lp_ms), median(raw_ms), "<= 1.30"},
          {"3c the same, the method copying", median(copy_ms), median(raw_ms), ""}};
}

// 4. 1000 async calls issued at once, then every get(); against 1000
// sequential sync calls. Returns the row and the first (cold) burst's ms.
row bench_async(lp::client<Bench>& client, const counts& n, double& cold_ms) {
  constexpr int calls = 1000;
  auto burst = [&] {
    std::vector<std::future<long>> futures;
    futures.reserve(calls);
    auto start = steady::now();
    for (int i = 0; i < calls; ++i) futures.push_back(client.async.add(1));
    std::vector<long> results;
    results.reserve(calls);
    for (auto& future : futures) results.push_back(future.get());
    auto elapsed = millis(steady::now() - start);
    // Calls to a node run one at a time: the totals must be distinct, 1 apart.
    std::sort(results.begin(), results.end());
    if (std::adjacent_find(results.begin(), results.end()) != results.end() ||
        results.back() - results.front() != calls - 1)
      fail("async add: results are not 1000 consecutive totals");
    return elapsed;
  };
  auto sequential = [&] {
    auto start = steady::now();
    for (int i = 0; i < calls; ++i) client.add(1);
    return millis(steady::now() - start);
  };
  cold_ms = burst();  // also the warm-up: the pool threads and connections
  sequential();
  std::vector<double> async_ms, sync_ms;
  for (int rep = 0; rep < n.async_reps; ++rep) {
    async_ms.push_back(burst());
    sync_ms.push_back(sequential());
  }
  return {"4 1000 async add at once, total ms", median(async_ms), median(sync_ms), ""};
}

// 5. 64 threads calling a model with a 200 us cost per invocation: calls/s
// batched (up to 64 per invocation) against unbatched, trials alternating.
row bench_batching(lp::client<Model>& model, const counts& n) {
  constexpr int callers = 64;
  auto trial = [&](bool batched) {
    std::atomic<bool> go{false}, done{false}, mixed_up{false};
    std::atomic<long> calls{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < callers; ++t)
      threads.emplace_back([&, t] {
        while (!go) std::this_thread::yield();
        while (!done) {
          long r = batched ? model.infer_batched(t) : model.infer(t);
          if (r != t + 1) mixed_up = true;
          ++calls;
        }
      });
    auto start = steady::now();
    go = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(n.throughput_seconds * 2));
    done = true;
    for (auto& thread : threads) thread.join();
    if (mixed_up) fail("model: a caller got another caller's result");
    return static_cast<double>(calls) / seconds(steady::now() - start);
  };
  trial(true), trial(false);  // warm up: 64 connections each
  std::vector<double> batched, unbatched;
  for (int i = 0; i < std::max(2, n.throughput_trials / 4); ++i) {
    batched.push_back(trial(true));
    unbatched.push_back(trial(false));
  }
  return {"5 64 callers, batched, calls/s", median(batched), median(unbatched), ""};
}

// 6. One small sync call to a node in the same process without HTTP
// (lp::direct_calls<P>) against the same call over HTTP.
row bench_direct(lp::client<Bench>& direct, lp::client<Bench>& http, const counts& n) {
  for (int i = 0; i < 500; ++i) direct.add(0), http.add(0);
  // Timed a block at a time: a direct call takes little more than the two
  // clock reads that would time it alone.
  std::vector<double> direct_ns, http_ns;
  for (int round = 0; round < n.latency_rounds / 4; ++round)
    for (auto* client : {&direct, &http}) {
      auto start = steady::now();
      for (int i = 0; i < n.latency_block; ++i) client->add(0);
      (client == &direct ? direct_ns : http_ns)
          .push_back(micros(steady::now() - start) * 1000 / n.latency_block);
    }
  return {"6 direct add(long), median ns/call", median(direct_ns), median(http_ns), ""};
}

// 7. One small sync call over TLS against the same call over plain HTTP,
// each on its one kept connection, blocks alternating.
row bench_tls(lp::client<Bench>& tls, lp::client<Bench>& plain, const counts& n) {
  for (int i = 0; i < 500; ++i) tls.add(0), plain.add(0);
  std::vector<double> tls_us, plain_us;
  for (int round = 0; round < n.latency_rounds / 4; ++round)
    for (auto* client : {&tls, &plain}) {
      auto start = steady::now();
      for (int i = 0; i < n.latency_block; ++i) client->add(0);
      (client == &tls ? tls_us : plain_us)
          .push_back(micros(steady::now() - start) / n.latency_block);
    }
  return {"7 add(long) over TLS, median us/call", median(tls_us), median(plain_us),
          "<= 1.30"};
}

// 8. The echo of 3 over TLS against the same over plain HTTP, each on its
// kept connection: every round one of each, the order alternating.
row bench_tls_echo(lp::client<Bench>& tls, lp::client<Bench>& plain, const counts& n) {
  const std::vector<float> values = echo_values();
  // Warm up, and check both echo faithfully.
  if (tls.echo(values) != values)
    fail("lp echo over TLS: the vector came back different");
  if (plain.echo(values) != values) fail("lp echo: the vector came back different");
  std::vector<double> tls_ms, plain_ms;
  for (int round = 0; round < 2 * n.echo_rounds; ++round)
    for (int k = 0; k < 2; ++k) {
      bool over_tls = (round + k) % 2 == 0;
      auto start = steady::now();
      auto echoed = (over_tls ? tls : plain).echo(values);
      (over_tls ? tls_ms : plain_ms).push_back(millis(steady::now() - start));
      if (echoed.size() != echo_count) fail("lp echo: wrong size");
    }
  return {"8 echo 1M float32 over TLS, ms/trip", median(tls_ms), median(plain_ms),
          "<= 1.50"};
}

// --- 9: a new connection, over TLS and over plain HTTP -------------------

// Row 9's nodes are processes of this binary started with this flag: a
// test_multi_processing launch has a run directory, where the launch's
// certificate and key are for a client of our own to present.
constexpr std::string_view handshake_node_flag = "--handshake-node";

void build_handshake_program(lp::program& p) {
  p.add_node<Bench>("bench");
}

std::string this_executable() {
  std::string path(4096, '\0');
  auto length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0) fail(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  path.resize(static_cast<std::size_t>(length));
  return path;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int port_of(const lp::controller& running, const std::string& label) {
  auto where = lp::detail::address_of_url(running.urls().at(label));
  if (!where) fail("no address for node " + label);
  return where->port;
}

// The protocol version and cipher a TLS 1.3 handshake with the node at
// 127.0.0.1:port settles on, with `context`'s settings (those of every
// connection of the launch): "TLSv1.3 TLS_AES_256_GCM_SHA384".
std::string negotiated_cipher(int port, const lp::detail::tls_context& context) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<std::uint16_t>(port));
  where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string said;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0) {
    lp::detail::ssl_handle ssl(SSL_new(context.native()));
    if (ssl && SSL_set_fd(ssl.get(), fd) == 1 && SSL_connect(ssl.get()) == 1) {
      said = std::string(SSL_get_version(ssl.get())) + " " +
             SSL_CIPHER_get_name(SSL_get_current_cipher(ssl.get()));
      SSL_shutdown(ssl.get());
    }
  }
  ::close(fd);
  if (said.empty()) fail("no TLS handshake with the node of row 9");
  return said;
}

struct handshake_figures {
  std::vector<row> rows;
  std::string cipher;  // "TLSv1.3 TLS_AES_256_GCM_SHA384"
};

// 9. What a new connection costs: connect (over TLS also the handshake:
// ECDHE and ECDSA P-256, both sides' certificates checked against the
// launch's), then a first small call on it (POST add, JSON), timed to its
// reply; the connection is closed untimed. The client's side of a TLS 1.3
// handshake ends with its certificate sent: the node checks it while the
// first request is on its way, so that check falls in the first call.
// The client is ours (detail/call/http_connection.hpp), over TLS with the
// run directory's credentials, as curl or a client on another host would
// hold them. Against the same to a node over plain HTTP; blocks of each
// alternating.
handshake_figures bench_handshake(const counts& n) {
  lp::program p("bench_handshake");
  build_handshake_program(p);
  auto launch = [&](bool tls) {
    lp::process_test_options options;
    options.executable = this_executable();
    options.arguments = {std::string(handshake_node_flag)};
    if (tls) options.arguments.push_back("--lp_tls=on");
    options.termination_notice = std::chrono::seconds(5);
    return lp::launch<lp::test_multi_processing>(p, options);
  };
  auto tls_running = launch(true);
  auto plain_running = launch(false);
  auto handle = p.find<Bench>("bench");
  // Both serve before anything is timed.
  if (tls_running.client(handle).add(0) != 0 || plain_running.client(handle).add(0) != 0)
    fail("row 9's nodes: a first add did not answer 0");
  const std::string certificate = read_whole_file(tls_running.run_dir() + "/tls.crt");
  const lp::detail::tls_context context(
      {certificate, read_whole_file(tls_running.run_dir() + "/tls.key"), certificate},
      tls_running.run_dir());
  const int tls_port = port_of(tls_running, "bench");
  const int plain_port = port_of(plain_running, "bench");
  auto headers_of = [](const lp::controller& running) {
    return "Content-Type: application/json\r\nAuthorization: Bearer " + running.secret() +
           "\r\n";
  };
  const std::string tls_headers = headers_of(tls_running);
  const std::string plain_headers = headers_of(plain_running);

  using connection = lp::detail::http_connection;
  std::string body;
  std::vector<double> tls_open, tls_total, plain_open, plain_total;
  auto fresh = [&](bool tls) {
    auto start = steady::now();
    auto deadline = start + std::chrono::seconds(10);
    auto opened_connection = connection::open("127.0.0.1", tls ? tls_port : plain_port,
                                              deadline, tls ? &context : nullptr);
    auto opened = steady::now();
    auto reply =
        opened_connection->post("/lp/v1/call/add", tls ? tls_headers : plain_headers,
                                "[0]", deadline, body, std::size_t{1} << 20);
    auto answered = steady::now();
    opened_connection.reset();
    if (reply.status != 200)
      fail("row 9: status " + std::to_string(reply.status) + ": " +
           body.substr(0, reply.body_size));
    (tls ? tls_open : plain_open).push_back(micros(opened - start));
    (tls ? tls_total : plain_total).push_back(micros(answered - start));
  };
  for (int i = 0; i < 20; ++i) fresh(true), fresh(false);  // warm up
  tls_open.clear(), tls_total.clear(), plain_open.clear(), plain_total.clear();
  constexpr int block = 4;
  for (int round = 0; round < n.latency_rounds / 10; ++round)
    for (int k = 0; k < 2; ++k) {
      bool tls = (round + k) % 2 == 0;
      for (int i = 0; i < block; ++i) fresh(tls);
    }
  handshake_figures figures;
  figures.cipher = negotiated_cipher(tls_port, context);
  figures.rows = {
      {"9 new connection + first add, us", median(tls_total), median(plain_total), ""},
      {"  of which connect (+ handshake), us", median(tls_open), median(plain_open), ""}};
  if (!tls_running.stop() || !plain_running.stop())
    fail("row 9's nodes: " + tls_running.summary() + plain_running.summary());
  return figures;
}

void print_table(const std::vector<row>& rows) {
  std::printf("%-36s %12s %12s %9s  %s\n", "benchmark", "launchpad", "baseline", "ratio",
              "goal");
  for (const auto& r : rows) {
    double ratio = r.base > 0 ? r.lp / r.base : 0;
    std::string verdict;
    if (r.goal.size() > 3) {
      double target = std::stod(r.goal.substr(3));
      bool ok = r.goal.starts_with("<=") ? ratio <= target : ratio >= target;
      verdict = ok ? "ok" : "MISSED";
    }
    std::printf("%-36s %12.1f %12.1f %9.2f  %s%s%s\n", r.name.c_str(), r.lp, r.base,
                ratio, r.goal.empty() ? "-" : r.goal.c_str(), verdict.empty() ? "" : "  ",
                verdict.c_str());
  }
}

}  // namespace

// --- 10: a small call to another process --------------------------------

// A ping-pong child's whole life: it sends back each 64 bytes it reads,
// and exits at EOF (only calls that are safe after fork).
[[noreturn]] void echo_forever(int fd) {
  char buffer[64];
  for (;;) {
    std::size_t got = 0;
    while (got < sizeof buffer) {
      auto n = ::recv(fd, buffer + got, sizeof buffer - got, 0);
      if (n <= 0) ::_exit(n == 0 ? 0 : 1);
      got += static_cast<std::size_t>(n);
    }
    if (::send(fd, buffer, sizeof buffer, MSG_NOSIGNAL) !=
        static_cast<ssize_t>(sizeof buffer))
      ::_exit(1);
  }
}

// A 64-byte ping-pong with a child process: the floor of a call between two
// processes. The child of this process with threads only accepts, reads and
// writes (all safe after fork), and exits at EOF.
class raw_ping_process {
 public:
  raw_ping_process() {
    int listening = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    auto* generic = reinterpret_cast<sockaddr*>(&address);
    if (listening < 0 || ::bind(listening, generic, sizeof address) != 0 ||
        ::listen(listening, 1) != 0 || ::getsockname(listening, generic, &length) != 0)
      fail(std::string("raw ping-pong: cannot listen on loopback: ") +
           std::strerror(errno));
    child_ = ::fork();
    if (child_ < 0) fail(std::string("raw ping-pong: fork: ") + std::strerror(errno));
    if (child_ == 0) serve(listening);
    ::close(listening);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || ::connect(fd_, generic, sizeof address) != 0) {
      std::string why = std::strerror(errno);
      end_child();  // it waits in accept
      fail("raw ping-pong: connect: " + why);
    }
    set_nodelay(fd_);
  }
  raw_ping_process(const raw_ping_process&) = delete;
  raw_ping_process& operator=(const raw_ping_process&) = delete;
  ~raw_ping_process() { end_child(); }
  pid_t child() const { return child_; }

  void round_trip() {
    write_exactly(fd_, out_, sizeof out_);
    if (!read_exactly(fd_, in_, sizeof in_)) fail("raw ping-pong: the child closed");
  }

 private:
  // Our end's close is the child's EOF; a child that never got a
  // connection is killed.
  void end_child() {
    if (fd_ >= 0)
      ::close(fd_);
    else if (child_ > 0)
      ::kill(child_, SIGKILL);
    int status = 0;
    if (child_ > 0) ::waitpid(child_, &status, 0);
    fd_ = -1, child_ = -1;
  }

  [[noreturn]] static void serve(int listening) {
    int fd = ::accept(listening, nullptr, nullptr);
    if (fd < 0) ::_exit(1);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    echo_forever(fd);
  }

  pid_t child_ = -1;
  int fd_ = -1;
  char out_[64] = {}, in_[64] = {};
};

// 10. Row 1's call to a node process (test_multi_processing, this binary
// again), against the raw ping-pong between two processes; blocks of 20
// alternating.
row bench_cross_process(const counts& n) {
  raw_ping_process ping;  // forked before the launch, whose node it need not hold
  lp::program p("bench_cross");
  build_handshake_program(p);
  lp::process_test_options options;
  options.executable = this_executable();
  options.arguments = {std::string(handshake_node_flag)};
  options.termination_notice = std::chrono::seconds(5);
  auto running = lp::launch<lp::test_multi_processing>(p, options);
  auto client = running.client(p.find<Bench>("bench"));
  for (int i = 0; i < 500; ++i) client.add(0), ping.round_trip();  // warm up
  std::vector<double> lp_us, raw_us;
  auto block = [&](bool lp) {
    for (int i = 0; i < n.latency_block; ++i) {
      auto start = steady::now();
      if (lp) {
        if (client.add(0) < 0) fail("cross-process add: negative total");
      } else {
        ping.round_trip();
      }
      (lp ? lp_us : raw_us).push_back(micros(steady::now() - start));
    }
  };
  for (int round = 0; round < n.latency_rounds / 2; ++round)
    block(round % 2 == 0), block(round % 2 != 0);
  if (!running.stop()) fail("row 10's node: " + running.summary());
  return {"10 add(long) to a process, median us", median(lp_us), median(raw_us),
          "<= 2.00"};
}

// 11. Process CPU per call when calls come 1 ms apart, against the
// floor's ping-pong at the same pace, blocks alternating: what waiting for
// a reply or the next request costs where a spin before blocking
// (util/spin_wait.hpp) cannot pay, the next request being far off.
row bench_paced(lp::client<Bench>& client, const counts& n) {
  raw_tcp_echo ping(64);
  char out[64] = {}, in[64];
  double lp_cpu = 0, floor_cpu = 0;
  int blocks = 0;
  auto paced = [&](double& cpu_total, auto&& once) {
    auto cpu = cpu_seconds();
    for (int i = 0; i < n.latency_block; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      once();
    }
    cpu_total += cpu_seconds() - cpu;
  };
  auto lp_block = [&] {
    paced(lp_cpu, [&] {
      if (client.add(0) < 0) fail("paced add: negative total");
    });
  };
  auto floor_block = [&] { paced(floor_cpu, [&] { ping.round_trip(out, in); }); };
  for (int round = 0; round < n.latency_rounds / 20; ++round, ++blocks)
    if (round % 2 == 0)
      lp_block(), floor_block();
    else
      floor_block(), lp_block();
  if (auto error = ping.finish(); !error.empty())
    fail("raw TCP ping-pong server: " + error);
  double calls = static_cast<double>(blocks * n.latency_block);
  return {"11 add(long) 1 ms apart, process CPU us/call", lp_cpu / calls * 1e6,
          floor_cpu / calls * 1e6, ""};
}

// --- 12: one host: a node process over its unix socket -------------------

// A 64-byte ping-pong with a child process over a unix socket pair: the
// floor of a call between two processes of one host. As raw_ping_process,
// the child only reads and writes, and exits at EOF.
class raw_unix_ping {
 public:
  raw_unix_ping() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      fail(std::string("unix ping-pong: socketpair: ") + std::strerror(errno));
    child_ = ::fork();
    if (child_ < 0) fail(std::string("unix ping-pong: fork: ") + std::strerror(errno));
    if (child_ == 0) {
      ::close(pair[0]);
      echo_forever(pair[1]);
    }
    ::close(pair[1]);
    fd_ = pair[0];
  }
  raw_unix_ping(const raw_unix_ping&) = delete;
  raw_unix_ping& operator=(const raw_unix_ping&) = delete;
  ~raw_unix_ping() {
    ::close(fd_);
    int status = 0;
    ::waitpid(child_, &status, 0);
  }
  pid_t child() const { return child_; }

  void round_trip() {
    write_exactly(fd_, out_, sizeof out_);
    if (!read_exactly(fd_, in_, sizeof in_)) fail("unix ping-pong: the child closed");
  }

 private:
  pid_t child_ = -1;
  int fd_ = -1;
  char out_[64] = {}, in_[64] = {};
};

// 12. Calls between two processes of one host (test_multi_processing, this
// binary again): over the node's unix socket, large arrays through shared
// memory (the default), against the same over loopback TCP
// (--lp_same_host=off), against raw 64-byte ping-pongs with a forked child
// (over a unix socket pair, and over TCP as row 10's), 8 callers through one
// client, and float32 echoes against memcpy of their bytes in this process;
// blocks alternating, the order rotating. Process CPU counts this process's
// and the node's (or the child's).
std::vector<row> bench_same_host(const counts& n, std::string& notes) {
  raw_unix_ping unix_ping;  // forked before the launches, as row 10's
  raw_ping_process tcp_ping;
  lp::program p("bench_same_host");
  build_handshake_program(p);
  auto launch = [&](bool same_host) {
    lp::process_test_options options;
    options.executable = this_executable();
    options.arguments = {std::string(handshake_node_flag)};
    if (!same_host) options.arguments.push_back("--lp_same_host=off");
    options.termination_notice = std::chrono::seconds(5);
    return lp::launch<lp::test_multi_processing>(p, options);
  };
  auto local_running = launch(true);
  auto tcp_running = launch(false);
  auto handle = p.find<Bench>("bench");
  auto local = local_running.client(handle);
  auto tcp = tcp_running.client(handle);
  const auto local_pids = local_running.pids(), tcp_pids = tcp_running.pids();
  if (local_pids.size() != 1 || tcp_pids.size() != 1)
    fail("row 12: each launch should have one node process");
  for (int i = 0; i < 500; ++i)
    local.add(0), tcp.add(0), unix_ping.round_trip(), tcp_ping.round_trip();  // warm up
  // The default launch serves on a socket in its run directory, the other
  // does not: otherwise the rows below would compare TCP with TCP.
  if (!std::filesystem::exists(local_running.run_dir() + "/sockets/bench.sock") ||
      std::filesystem::exists(tcp_running.run_dir() + "/sockets"))
    fail(
        "row 12: the node should serve on sockets/bench.sock, and with "
        "--lp_same_host=off on TCP alone");

  // Small calls: 4 kinds of blocks, the order rotating each round.
  constexpr int kinds = 4;  // socket, TCP, raw unix, raw TCP
  std::vector<double> us[kinds];
  double cpu[kinds] = {};
  const std::vector<pid_t> pids[kinds] = {
      local_pids, tcp_pids, {unix_ping.child()}, {tcp_ping.child()}};
  auto block = [&](int which) {
    auto cpu_start = cpu_seconds_with(pids[which]);
    for (int i = 0; i < n.latency_block; ++i) {
      auto start = steady::now();
      if (which == 2)
        unix_ping.round_trip();
      else if (which == 3)
        tcp_ping.round_trip();
      else if ((which == 0 ? local : tcp).add(0) < 0)
        fail("same-host add: negative total");
      us[which].push_back(micros(steady::now() - start));
    }
    cpu[which] += cpu_seconds_with(pids[which]) - cpu_start;
  };
  for (int round = 0; round < n.latency_rounds / 2; ++round)
    for (int k = 0; k < kinds; ++k) block((round + k) % kinds);
  auto cpu_us = [&](int which) {
    return cpu[which] / static_cast<double>(us[which].size()) * 1e6;
  };
  std::vector<row> rows{
      {"12a add(long), socket / TCP, us", median(us[0]), median(us[1]), "<= 0.70"},
      {"12b add, socket / raw unix, us", median(us[0]), median(us[2]), "<= 1.30"},
      {"  CPU us/call, socket / TCP", cpu_us(0), cpu_us(1), ""},
      {"  CPU us/call, socket / raw unix", cpu_us(0), cpu_us(2), ""}};
  char line[256];
  std::snprintf(
      line, sizeof line,
      "12a-b: raw 64-byte ping-pongs with a child: unix %.1f us (CPU %.1f), TCP "
      "%.1f us (CPU %.1f)\n",
      median(us[2]), cpu_us(2), median(us[3]), cpu_us(3));
  notes += line;

  // 8 callers through one client each way, trials alternating.
  constexpr int callers = 8;
  auto local_call = [&](int) { local.add(1); };
  auto tcp_call = [&](int) { tcp.add(1); };
  hammer(callers, n.throughput_seconds / 2, local_call, local_pids);  // warm up
  hammer(callers, n.throughput_seconds / 2, tcp_call, tcp_pids);
  std::vector<double> local_rate, tcp_rate, local_rate_cpu, tcp_rate_cpu;
  for (int trial = 0; trial < n.throughput_trials; ++trial)
    for (int k = 0; k < 2; ++k) {
      bool over_socket = (trial + k) % 2 == 0;
      auto r = over_socket ? hammer(callers, n.throughput_seconds, local_call, local_pids)
                           : hammer(callers, n.throughput_seconds, tcp_call, tcp_pids);
      (over_socket ? local_rate : tcp_rate).push_back(r.calls_per_second);
      (over_socket ? local_rate_cpu : tcp_rate_cpu).push_back(r.cpu_us_per_call);
    }
  rows.push_back({"12c add x 8, socket / TCP, calls/s", median(local_rate),
                  median(tcp_rate), ">= 1.00"});
  rows.push_back(
      {"  CPU us/call, socket / TCP", median(local_rate_cpu), median(tcp_rate_cpu), ""});

  // Echoes of 4 MB and 64 MB, in memcpys of their bytes (into memory
  // already faulted in), socket, TCP and memcpy in turn. A std::vector
  // round trip through shared memory copies the values four times: into a
  // segment, out of it into the node's vector, into a segment of the reply,
  // out of it into the returned vector; through the socket's bytes, 5-6
  // times, the kernel's copies among them. An lp::tensor is read in place
  // (12f, 12g): two copies, one into each segment, and no fresh pages.
  auto echo_rows = [&](const std::string& name, std::size_t floats, int trials,
                       auto&& echo) {
    std::vector<float> values(floats), copy(floats);
    for (std::size_t i = 0; i < floats; ++i) values[i] = static_cast<float>(i);
    std::memcpy(copy.data(), values.data(), floats * sizeof(float));  // faulted in
    for (auto* client : {&local, &tcp})
      for (int i = 0; i < 3; ++i)  // warm up: segments made, heap grown; checked whole
        if (!echo(*client, values, true))
          fail("same-host echo: the values came back different");
    std::vector<double> ms[3];
    double echo_cpu[3] = {};
    const std::vector<pid_t> none;
    for (int round = 0; round < trials; ++round)
      for (int k = 0; k < 3; ++k) {
        int which = (round + k) % 3;  // socket, TCP, memcpy
        const auto& others = which == 0 ? local_pids : which == 1 ? tcp_pids : none;
        auto cpu_start = cpu_seconds_with(others);
        auto start = steady::now();
        if (which == 2) {
          std::memcpy(copy.data(), values.data(), floats * sizeof(float));
          if (copy.back() != values.back()) fail("same-host memcpy: copied wrong");
        } else if (!echo(which == 0 ? local : tcp, values, false)) {
          fail("same-host echo: the values came back different");
        }
        ms[which].push_back(millis(steady::now() - start));
        echo_cpu[which] += cpu_seconds_with(others) - cpu_start;
      }
    auto per = [&](int which) { return echo_cpu[which] / trials * 1e3; };
    rows.push_back({name + ", socket / memcpy", median(ms[0]), median(ms[2]), "<= 3.00"});
    rows.push_back({"  TCP / memcpy, ms", median(ms[1]), median(ms[2]), ""});
    rows.push_back({"  CPU ms/trip, socket / memcpy", per(0), per(2), ""});
    rows.push_back({"  CPU ms/trip, TCP / memcpy", per(1), per(2), ""});
  };
  // Whether the values came back: all of them in the warm-up (`whole`),
  // the size and the last value when timed.
  auto vector_echo = [](lp::client<Bench>& client, const std::vector<float>& values,
                        bool whole) {
    auto back = client.echo(values);
    return whole ? back == values
                 : back.size() == values.size() && back.back() == values.back();
  };
  bool tensor_in_place = true;
  lp::tensor<float> sent;  // made from the values at the first (untimed) echo
  auto tensor_echo = [&](lp::client<Bench>& client, const std::vector<float>& values,
                         bool whole) {
    if (sent.size() != values.size()) sent = lp::tensor<float>({values.size()}, values);
    auto back = client.echo_tensor(sent);
    if (&client == &local) tensor_in_place = tensor_in_place && back.in_shared_memory();
    if (back.size() != values.size()) return false;
    return whole ? std::equal(values.begin(), values.end(), back.data())
                 : back[values.size() - 1] == values.back();
  };
  constexpr std::size_t mb4 = std::size_t{1} << 20, mb64 = std::size_t{1} << 24;
  echo_rows("12d echo 4 MB", mb4, 4 * n.echo_rounds, vector_echo);
  echo_rows("12e echo 64 MB", mb64, n.echo_rounds, vector_echo);
  echo_rows("12f echo 4 MB tensor", mb4, 4 * n.echo_rounds, tensor_echo);
  echo_rows("12g echo 64 MB tensor", mb64, n.echo_rounds, tensor_echo);
  if (!tensor_in_place)
    fail("rows 12f-g: a tensor over the socket was not read in place");
  if (!local_running.stop()) fail("row 12's node: " + local_running.summary());
  if (!tcp_running.stop()) fail("row 12's TCP node: " + tcp_running.summary());
  return rows;
}

const char* build_kind() {
#ifdef __OPTIMIZE__
  return "optimized";
#else
  return "NOT OPTIMIZED (-O0): figures are meaningless, see benchmarks/README.md";
#endif
}

double load_average() {
  double one = 0;
  return ::getloadavg(&one, 1) == 1 ? one : -1;
}

constexpr const char* same_host_legend =
    "12: a node process of this host (test_multi_processing) called over its unix "
    "socket,\n"
    "   arrays through shared memory, against the same node launched with\n"
    "   --lp_same_host=off (loopback TCP), a raw 64-byte ping-pong with a forked child\n"
    "   over a unix socket pair, and memcpy of the echo's bytes in this process;\n"
    "   CPU counts both processes (this one and the node's or the child's)\n";

int main(int argc, char** argv) {
  // A node process of row 9, started by bench_handshake's launch.
  for (int i = 1; i < argc; ++i)
    if (argv[i] == handshake_node_flag) {
      lp::program p("bench_handshake");
      build_handshake_program(p);
      return lp::launch(p, argc, argv);
    }
  bool quick = false, same_host_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--same-host") {
      same_host_only = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--same-host]\n", argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  counts n{1000, 20, 24, 0.25, 15, 10};
  if (quick) n = {100, 20, 4, 0.15, 2, 1};

  try {
    if (same_host_only) {
      auto begin = steady::now();
      double load_before = load_average();
      std::string notes;
      auto rows = bench_same_host(n, notes);
      std::printf("\nlaunchpad %s, row 12 alone: %u cores, %s build%s\n\n",
                  lp::version.string, std::thread::hardware_concurrency(), build_kind(),
                  quick ? ", --quick" : "");
      print_table(rows);
      std::printf("\n%s%sload average %.2f before, %.2f after; total %.1f s\n",
                  same_host_legend, notes.c_str(), load_before, load_average(),
                  seconds(steady::now() - begin));
      return 0;
    }
    lp::program p("bench");
    auto node = p.add_node<Bench>("bench");
    auto model_node = p.add_node<Model>("model");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(node);
    auto model = running.client(model_node);
    lp::program direct_program("bench_direct");
    auto direct_node = direct_program.add_node<Bench>("bench");
    auto direct_running =
        lp::launch<lp::direct_calls<lp::test_multi_threading>>(direct_program);
    auto direct = direct_running.client(direct_node);
    lp::program tls_program("bench_tls");
    auto tls_node = tls_program.add_node<Bench>("bench");
    auto tls_running = lp::launch<lp::test_multi_threading>(tls_program, {.tls = true});
    auto tls = tls_running.client(tls_node);
    raw_http_server raw_server;
    raw_http_client raw(raw_server.port());

    auto begin = steady::now();
    auto progress = [](const char* what) {
      std::fprintf(stderr, "bench_calls: %s\n", what);
    };
    std::vector<row> rows;
    progress("1/12 sync latency");
    for (auto& r : bench_latency(client, raw, n)) rows.push_back(r);
    double lp_cores = 0, raw_cores = 0;
    progress("2/12 8-thread throughput");
    for (auto& r : bench_throughput(client, raw_server.port(), n, lp_cores, raw_cores))
      rows.push_back(r);
    progress("3/12 1M float32 echo");
    auto echo = bench_echo(client, n);
    for (auto& r : echo) rows.push_back(r);
    double cold_ms = 0;
    progress("4/12 1000 async calls");
    auto async = bench_async(client, n, cold_ms);
    rows.push_back(async);
    progress("5/12 batched handler");
    auto batching = bench_batching(model, n);
    rows.push_back(batching);
    progress("6/12 direct calls");
    auto direct_row = bench_direct(direct, client, n);
    rows.push_back(direct_row);
    progress("7/12 TLS");
    rows.push_back(bench_tls(tls, client, n));
    progress("8/12 1M float32 echo over TLS");
    rows.push_back(bench_tls_echo(tls, client, n));
    progress("9/12 new connections, TLS handshake");
    auto handshake = bench_handshake(n);
    for (auto& r : handshake.rows) rows.push_back(r);
    progress("10/12 a call to another process");
    rows.push_back(bench_cross_process(n));
    progress("11/12 calls 1 ms apart");
    rows.push_back(bench_paced(client, n));
    progress("12/12 one host: unix socket, shared memory");
    std::string same_host_notes;
    for (auto& r : bench_same_host(n, same_host_notes)) rows.push_back(r);
    running.stop();
    direct_running.stop();
    tls_running.stop();

    const char* build = build_kind();
    std::printf("\nlaunchpad %s call benchmarks: %u cores, %s build%s\n\n",
                lp::version.string, std::thread::hardware_concurrency(), build,
                quick ? ", --quick" : "");
    print_table(rows);
    std::printf(
        "\nratio = launchpad / baseline; both measured in this run, interleaved.\n"
        "1: baseline = cpp-httplib Server + Client, keep-alive, TCP_NODELAY, JSON via "
        "nlohmann;\n"
        "1f: baseline = the loopback floor, a 64-byte TCP ping-pong between two "
        "threads;\n"
        "   goal for launchpad's process CPU also <= 28 us/call: %s (%.1f us)\n"
        "2: baseline = the same server, 8 threads each with its own httplib::Client;\n"
        "   cores busy (process CPU / wall): launchpad %.2f, baseline %.2f\n"
        "3: baseline = raw TCP echo of 4 MB on loopback; goal also <= 8 ms/trip: %s "
        "(%.1f ms)\n"
        "3c: the same echo through echo_copy(const std::vector<float>&), which copies "
        "4 MB\n"
        "4: baseline = 1000 sequential sync add; async %.0f calls/s, first (cold) burst "
        "%.1f ms\n"
        "5: baseline = the same 64 callers, unbatched; each invocation costs 200 us\n"
        "6: baseline = the same call over HTTP (row 1's launchpad side)\n"
        "7: baseline = the same call over plain HTTP (row 1's launchpad side)\n"
        "8: baseline = the same echo over plain HTTP (row 3's launchpad side)\n"
        "9: baseline = the same over plain HTTP; nodes are processes "
        "(test_multi_processing),\n"
        "   a new connection per call, closed after it. TLS adds %.0f us a connection; "
        "the node\n"
        "   checks the client's certificate after connect returns, in the first call's "
        "time\n"
        "7-9: %s, %s\n"
        "10: baseline = a 64-byte TCP ping-pong with a forked child process;\n"
        "   the node is a process (test_multi_processing)\n"
        "11: baseline = the floor of 1f, its round trips 1 ms apart as the calls\n"
        "%s%s"
        "total measured time %.1f s\n",
        rows[3].lp <= 28.0 ? "ok" : "MISSED", rows[3].lp, lp_cores, raw_cores,
        echo[0].lp <= 8.0 ? "ok" : "MISSED", echo[0].lp, 1000.0 / (async.lp / 1000.0),
        cold_ms, handshake.rows[0].lp - handshake.rows[0].base, handshake.cipher.c_str(),
        OpenSSL_version(OPENSSL_VERSION), same_host_legend, same_host_notes.c_str(),
        seconds(steady::now() - begin));
    return 0;
  } catch (const std::exception& e) {  // bench_failure, lp::error, std::system_error...
    std::fprintf(stderr, "bench_calls: %s\n", e.what());
    return 1;
  }
}
