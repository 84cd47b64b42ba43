// Launch time of a program run as processes, against forking/execing as many
// trivial processes that bind a port, measured in the same run.
//
//   bench_launch [--quick]     the launcher: measures, prints the tables
//   bench_launch --nodes=N     a node process (run by lp's launcher)
//   bench_launch --bind-once   a baseline process (run by the baseline)
//
// For each N in {8, 32, 128} (--quick: {8, 32}), interleaved, R times each:
//   baseline: fork+execv N copies of this binary with --bind-once; each binds
//             a TCP socket on 127.0.0.1:0, listens, and writes one byte to
//             fd 3. Timed until all N bytes have arrived.
//   lp:       lp::launch<lp::test_multi_processing> of a program of N Ping
//             nodes (one process each, this binary with --nodes=N). Timed
//             until every node has answered one ping (N concurrent
//             client.async.ping() futures).
// It prints the median of each, the ratio lp / baseline (goal <= 2), and where
// the lp time went: when the nodes reached main(), built their service,
// published their address to the launcher's rendezvous and served the first
// ping (every node stamps these with CLOCK_MONOTONIC, which all processes
// share; the launcher asks for them after the timed part), and the CPU each
// node process and each baseline process used.
// See benchmarks/README.md.

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <iostream>
#include <launchpad/launchpad.hpp>
#include <map>
#include <streambuf>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// Nanoseconds on CLOCK_MONOTONIC: the same clock in every process.
long long now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

long long cpu_ns(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

double ms(long long ns) {
  return static_cast<double>(ns) / 1e6;
}

// What a node process stamps on its way to serving (0: not yet).
struct node_stamps {
  long long main_entry = 0;
  long long graph_built = 0;  // its own copy of the graph, just before lp::launch
  std::atomic<long long> constructed{0};
  std::atomic<long long> published{0};  // lp's "serving at" line: right after the publish
  std::atomic<long long> first_ping{0};
  std::atomic<long long> cpu_at_first_ping{0};  // the process's CPU time, all threads
};
node_stamps stamps;

}  // namespace

// The trivial service every node serves.
struct Ping {
  Ping() { stamps.constructed = now_ns(); }
  int ping() {
    long long expected = 0;
    auto t = now_ns();
    if (stamps.first_ping.compare_exchange_strong(expected, t))
      stamps.cpu_at_first_ping = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    return 1;
  }
  // Not timed: asked once every node has answered its ping. lp writes its
  // "serving at" line after the publish returns, so under load the launcher
  // may look the node up and ping it first: give that line a moment.
  std::vector<long long> timeline() {
    for (int i = 0; i < 2000 && stamps.published == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return {stamps.main_entry, stamps.graph_built, stamps.constructed,
            stamps.published,  stamps.first_ping,  stamps.cpu_at_first_ping};
  }
};
LP_SERVICE(Ping, ping, timeline);

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "bench_launch: %s\n", what.c_str());
  std::exit(1);
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// The one graph, built alike by the launcher and by every node process.
std::vector<lp::handle<Ping>> build_graph(lp::program& p, int nodes) {
  auto group = p.group("nodes");
  std::vector<lp::handle<Ping>> handles;
  for (int i = 0; i < nodes; ++i) handles.push_back(group.add_node<Ping>());
  return handles;
}

// Passes everything through to stderr, and stamps the moment lp's node
// process writes "<label> serving at <url>", which it does right after its
// rendezvous publish returns. (Each `<<` of that line reaches xsputn whole.)
class stamping_buffer final : public std::streambuf {
 public:
  explicit stamping_buffer(std::streambuf* out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* text, std::streamsize n) override {
    if (stamps.published == 0 &&
        std::string_view(text, static_cast<std::size_t>(n)).find("serving at") !=
            std::string_view::npos)
      stamps.published = now_ns();
    return out_->sputn(text, n);
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return out_->sputc(traits_type::to_char_type(c));
  }
  int sync() override { return out_->pubsync(); }

 private:
  std::streambuf* out_;
};

int node_main(int nodes, int argc, char** argv) {
  lp::program p("bench_launch");
  build_graph(p, nodes);
  stamps.graph_built = now_ns();
  stamping_buffer stamping(std::cerr.rdbuf());
  auto* original = std::cerr.rdbuf(&stamping);
  int status = lp::launch(p, argc, argv);
  std::cerr.rdbuf(original);
  return status;
}

// A baseline process: bind, listen, say so on fd 3, wait for stdin's EOF.
int bind_once_main() {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 3;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return 4;
  if (::listen(s, SOMAXCONN) != 0) return 5;
  char ready = 1;
  if (::write(3, &ready, 1) != 1) return 6;
  ::close(3);
  char buffer[64];
  for (;;) {
    auto n = ::read(0, buffer, sizeof buffer);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::close(s);
  return 0;
}

std::string this_executable() {
  std::string path(4096, '\0');
  auto length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0) fail(errno_text("readlink /proc/self/exe"));
  path.resize(static_cast<std::size_t>(length));
  return path;
}

bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Processes whose parent is this one (zombies included).
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  auto self = ::getpid();
  while (auto* entry = ::readdir(proc)) {
    pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close_paren + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == self)
      out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

long long children_cpu_ns() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  auto ns = [](const timeval& t) {
    return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_usec * 1000LL;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

struct baseline_result {
  long long wall_ns;
  long long forked_ns;           // every process forked
  long long cpu_per_process_ns;  // from wait4: start to exit
  long long launcher_cpu_ns;     // this process's, over the timed part
};

// fork+execv `nodes` bind-once processes; the time until all are ready.
baseline_result run_baseline(const std::string& exe, int nodes) {
  int ready[2], hold[2];
  if (::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(hold, O_CLOEXEC) != 0)
    fail(errno_text("pipe2"));
  std::string flag = "--bind-once";
  char* argv[] = {const_cast<char*>(exe.c_str()), flag.data(), nullptr};
  const pid_t parent = ::getpid();
  std::vector<pid_t> pids;
  pids.reserve(static_cast<std::size_t>(nodes));

  auto launcher_before = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  auto start = now_ns();
  for (int i = 0; i < nodes; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) {
      for (auto p : pids) ::kill(p, SIGKILL);
      for (auto p : pids) ::waitpid(p, nullptr, 0);
      fail(errno_text("fork"));
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(hold[0], 0);
      ::dup2(ready[1], 3);
      ::syscall(SYS_close_range, 4U, ~0U, 0U);
      ::execv(argv[0], argv);
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  auto forked = now_ns();
  ::close(ready[1]);
  ::close(hold[0]);
  int arrived = 0;
  std::string why;
  while (arrived < nodes) {
    pollfd fd{ready[0], POLLIN, 0};
    int polled = ::poll(&fd, 1, 30'000);
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) {
      why = "baseline: not every process was ready within 30 s";
      break;
    }
    char bytes[256];
    auto n = ::read(ready[0], bytes, sizeof bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = "baseline: a process died before it was ready";
      break;
    }
    arrived += static_cast<int>(n);
  }
  auto end = now_ns();
  auto launcher_cpu = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - launcher_before;

  ::close(hold[1]);  // EOF on every child's stdin: they exit
  ::close(ready[0]);
  if (!why.empty())
    for (auto p : pids) ::kill(p, SIGKILL);
  long long cpu = 0;
  for (auto p : pids) {
    int status = 0;
    rusage usage{};
    if (::wait4(p, &status, 0, &usage) != p) fail(errno_text("wait4"));
    cpu += (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1'000'000'000LL +
           (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000LL;
    if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      why = "baseline: a process ended with status " + std::to_string(status);
  }
  if (!why.empty()) fail(why);
  return {end - start, forked - start, cpu / nodes, launcher_cpu};
}

// Per run of the lp launch, milliseconds since just before lp::launch.
struct lp_result {
  long long wall_ns;
  double forked;          // the controller returned: every process forked
  double last_main;       // the last node process reached main()
  double last_built;      // ... built its Ping
  double last_published;  // ... published its address
  double last_pinged;     // ... ran its first ping()
  double stop_ms;         // stop() (not timed)
  // Per node, median over the nodes of this run:
  double main_to_built;
  double built_to_published;
  double published_to_pinged;
  double cpu_to_serve;     // node CPU until its first ping
  double cpu_per_process;  // node CPU over its whole life (RUSAGE_CHILDREN)
  double launcher_cpu;     // the launcher's CPU during the timed part
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

lp_result run_lp(const std::string& exe, int nodes) {
  lp::program p("bench_launch");
  auto handles = build_graph(p, nodes);
  lp::process_test_options options;
  options.executable = exe;
  options.arguments = {"--nodes=" + std::to_string(nodes)};
  options.termination_notice = std::chrono::seconds(10);

  auto children_before = children_cpu_ns();
  auto launcher_before = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  lp_result r{};
  std::vector<std::vector<long long>> timelines;
  std::vector<pid_t> pids;
  long long start = 0;
  {
    start = now_ns();
    auto running = lp::launch<lp::test_multi_processing>(p, options);
    auto forked = now_ns();
    std::vector<lp::client<Ping>> clients;
    std::vector<std::future<int>> answers;
    clients.reserve(handles.size());
    answers.reserve(handles.size());
    for (const auto& handle : handles) {
      clients.push_back(running.client(handle));
      answers.push_back(clients.back().async.ping());
    }
    for (auto& answer : answers)
      if (answer.get() != 1) fail("lp: a ping did not answer 1");
    auto end = now_ns();
    r.launcher_cpu = ms(cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - launcher_before);

    pids = running.pids();
    if (pids.size() != static_cast<std::size_t>(nodes))
      fail("lp: " + std::to_string(pids.size()) + " node processes running, expected " +
           std::to_string(nodes));
    for (auto& client : clients) timelines.push_back(client.timeline());
    auto stop_start = now_ns();
    if (!running.stop())
      fail("lp: stop() did not end every node cleanly:\n" + running.summary());
    r.stop_ms = ms(now_ns() - stop_start);
    r.wall_ns = end - start;
    r.forked = ms(forked - start);
  }
  for (auto pid : pids)
    if (!gone(pid))
      fail("lp: node process " + std::to_string(pid) + " is still there after stop()");
  if (auto left = children(); !left.empty())
    fail("lp: " + std::to_string(left.size()) + " child processes left after the run");
  r.cpu_per_process = ms(children_cpu_ns() - children_before) / nodes;

  std::vector<double> main_to_built, built_to_published, published_to_pinged, cpu;
  for (const auto& t : timelines) {
    if (t.size() != 6 || std::find(t.begin(), t.end(), 0LL) != t.end())
      fail("lp: a node's timeline is incomplete");
    r.last_main = std::max(r.last_main, ms(t[0] - start));
    r.last_built = std::max(r.last_built, ms(t[2] - start));
    // The publish had returned by the first ping at the latest.
    auto published = std::min(t[3], t[4]);
    r.last_published = std::max(r.last_published, ms(published - start));
    r.last_pinged = std::max(r.last_pinged, ms(t[4] - start));
    main_to_built.push_back(ms(t[2] - t[0]));
    built_to_published.push_back(ms(published - t[2]));
    published_to_pinged.push_back(ms(t[4] - published));
    cpu.push_back(ms(t[5]));
  }
  r.main_to_built = median(main_to_built);
  r.built_to_published = median(built_to_published);
  r.published_to_pinged = median(published_to_pinged);
  r.cpu_to_serve = median(cpu);
  return r;
}

// ~10 s in all on 2 busy cores; more rounds where a run is short and noisy.
int rounds_for(int nodes) {
  return nodes <= 8 ? 11 : nodes <= 32 ? 5 : 3;
}

int launcher_main(bool quick) {
  auto exe = this_executable();
  std::vector<int> sizes = quick ? std::vector<int>{8, 32} : std::vector<int>{8, 32, 128};
#ifdef __OPTIMIZE__
  const char* build = "optimized build";
#else
  const char* build =
      "NOT OPTIMIZED (-O0): figures are meaningless, see benchmarks/README.md";
#endif
  std::printf("launchpad %s launch benchmark: %u cores, %s\n\n",
              std::string(lp::version.string).c_str(),
              std::thread::hardware_concurrency(), build);
  std::fflush(stdout);

  auto total_start = now_ns();
  // Warm up: the binary and its libraries into the page cache, the call pool.
  run_baseline(exe, 4);
  run_lp(exe, 4);

  struct row {
    int nodes = 0;
    std::vector<double> baseline, lp, baseline_cpu, baseline_forked,
        baseline_launcher_cpu;
    std::vector<lp_result> runs;
  };
  std::vector<row> rows;
  for (int nodes : sizes) {
    row r;
    r.nodes = nodes;
    for (int round = 0; round < rounds_for(nodes); ++round) {
      // Alternate which goes first, so drift in the machine's load hits both.
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn == 0) == (round % 2 == 0)) {
          auto b = run_baseline(exe, nodes);
          r.baseline.push_back(ms(b.wall_ns));
          r.baseline_cpu.push_back(ms(b.cpu_per_process_ns));
          r.baseline_forked.push_back(ms(b.forked_ns));
          r.baseline_launcher_cpu.push_back(ms(b.launcher_cpu_ns));
          std::fprintf(stderr, "bench_launch: %3d nodes, round %d: baseline %8.1f ms\n",
                       nodes, round + 1, ms(b.wall_ns));
        } else {
          auto l = run_lp(exe, nodes);
          r.lp.push_back(ms(l.wall_ns));
          r.runs.push_back(l);
          std::fprintf(stderr, "bench_launch: %3d nodes, round %d: lp       %8.1f ms\n",
                       nodes, round + 1, ms(l.wall_ns));
        }
      }
    }
    rows.push_back(std::move(r));
  }
  auto total = ms(now_ns() - total_start) / 1000;

  std::printf("%-6s %5s %14s %14s %7s  %s\n", "nodes", "runs", "baseline ms", "lp ms",
              "ratio", "goal");
  for (const auto& r : rows) {
    double b = median(r.baseline), l = median(r.lp);
    bool ok = l <= 2 * b;
    std::printf("%-6d %5zu %14.1f %14.1f %7.2f  <= 2.00  %s\n", r.nodes, r.lp.size(), b,
                l, l / b, ok ? "ok" : "MISSED");
  }
  std::printf(
      "\nbaseline = fork+execv of N copies of this binary that bind 127.0.0.1:0, listen "
      "and\n"
      "           write a byte to an inherited pipe; timed until all N bytes arrived.\n"
      "lp       = lp::launch<lp::test_multi_processing> of N Ping nodes, one process "
      "each;\n"
      "           timed until all N concurrent client.async.ping() futures answered.\n"
      "medians of the runs; ratio = lp / baseline; both measured in this run, "
      "interleaved.\n");

  auto med = [](const std::vector<lp_result>& runs, double lp_result::*field) {
    std::vector<double> v;
    for (const auto& run : runs) v.push_back(run.*field);
    return median(v);
  };
  std::printf(
      "\nwhere the lp time goes (ms since just before lp::launch; medians over runs):\n");
  std::printf("%-6s %8s %8s %8s %10s %8s %9s %16s\n", "nodes", "forked", "main", "built",
              "published", "pinged", "answered", "baseline forked");
  for (const auto& r : rows)
    std::printf(
        "%-6d %8.1f %8.1f %8.1f %10.1f %8.1f %9.1f %16.1f\n", r.nodes,
        med(r.runs, &lp_result::forked), med(r.runs, &lp_result::last_main),
        med(r.runs, &lp_result::last_built), med(r.runs, &lp_result::last_published),
        med(r.runs, &lp_result::last_pinged), median(r.lp), median(r.baseline_forked));
  std::printf(
      "forked: lp::launch returned, every node process forked; main, built, published,\n"
      "pinged: when the LAST node process reached main(), constructed its Ping, "
      "published\n"
      "its address to the rendezvous (lp's 'serving at' line, or its first ping if that\n"
      "came first), ran its first ping();\n"
      "answered: the last future answered (the lp figure above); baseline forked: the\n"
      "baseline's fork loop ended.\n");

  std::printf(
      "\nper node process (ms; medians over the nodes of a run, then over runs):\n");
  std::printf("%-6s %10s %13s %11s %9s %9s %9s %14s %9s\n", "nodes", "main>built",
              "built>publish", "publ>pinged", "cpu:serve", "cpu:life", "cpu:base",
              "launcher cpu", "stop");
  for (const auto& r : rows) {
    char launcher[32];
    std::snprintf(launcher, sizeof launcher, "%.0f / %.0f",
                  med(r.runs, &lp_result::launcher_cpu), median(r.baseline_launcher_cpu));
    std::printf("%-6d %10.2f %13.2f %11.2f %9.2f %9.2f %9.2f %14s %9.1f\n", r.nodes,
                med(r.runs, &lp_result::main_to_built),
                med(r.runs, &lp_result::built_to_published),
                med(r.runs, &lp_result::published_to_pinged),
                med(r.runs, &lp_result::cpu_to_serve),
                med(r.runs, &lp_result::cpu_per_process), median(r.baseline_cpu),
                launcher, med(r.runs, &lp_result::stop_ms));
  }
  std::printf(
      "main>built, built>publish, publ>pinged: a node's own steps (built>publish = start "
      "its\n"
      "HTTP server + POST its address to the rendezvous; publ>pinged = waiting for the\n"
      "launcher's ping, which it sends only once lp::launch has returned);\n"
      "cpu:serve: a node process's CPU (all threads) up to its first ping; cpu:life: up "
      "to\n"
      "its exit (RUSAGE_CHILDREN / N); cpu:base: a baseline process's, start to exit "
      "(wait4);\n"
      "launcher cpu: the launching process's own CPU in the timed part, lp / baseline;\n"
      "stop: controller.stop() (not timed).\n");
  std::printf("\ntotal time %.1f s\n", total);
  if (auto left = children(); !left.empty())
    fail(std::to_string(left.size()) + " child processes left at the end");
  return 0;  // a missed goal is a figure, not an error
}

}  // namespace

int main(int argc, char** argv) {
  stamps.main_entry = now_ns();
  bool quick = false;
  int nodes = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--bind-once") return bind_once_main();
    if (arg.starts_with("--nodes=")) {
      nodes = std::atoi(std::string(arg.substr(8)).c_str());
      if (nodes <= 0) {
        std::fprintf(stderr, "bench_launch: --nodes=N needs N > 0\n");
        return 2;
      }
    } else if (arg == "--quick") {
      quick = true;
    } else if (!arg.starts_with("--lp_")) {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (nodes > 0) return node_main(nodes, argc, argv);
  try {
    return launcher_main(quick);
  } catch (const std::exception& e) {
    fail(e.what());
  }
}
