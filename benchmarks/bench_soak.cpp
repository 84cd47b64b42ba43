// A node's memory, threads and descriptors under a long mixed load, and
// after it (issue 50, "Memory after load").
//
//   bench_soak [--quick] [--python] [--calls N] [--connections N]
//              [--mix small|large|mixed] [--after S] [--node-flag F]...
//   bench_soak --node       the node process (run by its own launch)
//
// One node process (test_multi_processing, this binary again) answers
// add(long), echo(std::string) and echo_floats(std::vector<float>); with
// --python the node is bench_soak_node.py's, run by Debian's
// /usr/bin/python3. wrk calls it in three phases, while this program
// samples the node's RSS, threads and open descriptors (/proc) every second:
//   1. small:  add(1) in JSON and in CBOR over --connections (64)
//              connections for 20 s: the RSS before the load;
//   2. load:   --mix over as many connections, in runs of wrk of 30 s,
//              until the node has served --calls (10 M) calls in all.
//              mixed: 14 small calls in turn for each 64 KB body, a JSON
//              string and a CBOR float32 array, each echoed back; large:
//              the 64 KB JSON string alone; small: phase 1's calls;
//   3. after:  no calls for --after (40) seconds.
// It prints one line per sample, then the RSS before the load, its peak
// and its range over the load's second half, and how long after the load
// it came back within 2x of the figure before. --quick (a smoke run of
// about 25 s): 5 s runs of wrk, one of the load, 10 s after. --node-flag passes a flag to the node's process
// (--lp_system_malloc).
//
// wrk must be installed (apt-get install wrk). Figures mean something only
// from an optimized build; see benchmarks/README.md ("Memory after load").

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "node_process.hpp"

struct Soak {
  long add(long x) {
    count();
    return x + 1;
  }
  std::string echo(std::string text) {
    count();
    return text;
  }
  std::vector<float> echo_floats(std::vector<float> values) {
    count();
    return values;
  }
  long calls() { return served.load(std::memory_order_relaxed); }
  int pid() { return static_cast<int>(::getpid()); }

  void count() { served.fetch_add(1, std::memory_order_relaxed); }
  std::atomic<long> served{0};
};
LP_SERVICE(Soak, add, echo, echo_floats, calls, pid);

// The same node in Python (bench_soak_node.py), for --python.
struct PySoak {
  long add(long x);
  std::string echo(std::string text);
  std::vector<float> echo_floats(std::vector<float> values);
  long calls();
  int pid();
};
LP_SERVICE(PySoak, add, echo, echo_floats, calls, pid);
LP_PYTHON(PySoak, "bench_soak_node", "Soak");

namespace {

namespace fs = std::filesystem;
using bench::descriptors_of;
using bench::fail;
using bench::status_field;
using steady = std::chrono::steady_clock;
constexpr std::string_view node_flag = "--node";
constexpr std::string_view python_flag = "--python";
constexpr std::size_t large_bytes = 64 << 10;

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + path.string());
}

// What the kernel says the node holds now.
struct sample {
  double seconds;  // since the first phase began
  std::string phase;
  double rss_mib;
  long threads;
  long descriptors;
  long calls;  // served by the node so far
};

// The request bodies wrk sends, one file each, and the script that sends
// them in turn on every connection. wrk reads the launch's secret from its
// run directory itself.
struct requests {
  requests() {
    char name[] = "/tmp/lp-bench-soak-XXXXXX";
    if (!::mkdtemp(name)) fail(std::string("mkdtemp: ") + std::strerror(errno));
    dir = name;
    write_file(dir / "add.json", "[1]");
    write_file(dir / "add.cbor", std::string("\x81\x01", 2));
    write_file(dir / "echo.json", "[\"" + std::string(large_bytes - 4, 'x') + "\"]");
    // [float32 array, little-endian]: RFC 8746 tag 85, then a byte string.
    std::string floats("\x81\xd8\x55\x5a", 4);
    for (int shift : {24, 16, 8, 0})
      floats += static_cast<char>((large_bytes >> shift) & 0xff);
    for (std::size_t i = 0; i < large_bytes / 4; ++i) {
      float value = static_cast<float>(i);
      floats.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    write_file(dir / "echo_floats.cbor", floats);
    write_file(dir / "send.lua",
               R"lua(-- bench_soak: each connection sends the mix's requests in turn
local requests, next = {}, 0
local function read(path)
  local f = assert(io.open(path, "rb"))
  local bytes = f:read("*a")
  f:close()
  return bytes
end
function init(args)
  local dir, secret = args[1], read(args[2] .. "/secret"):gsub("%s+$", "")
  for line in io.lines(dir .. "/" .. args[3]) do
    local method, file, type = line:match("(%S+) (%S+) (%S+)")
    requests[#requests + 1] = wrk.format("POST", "/lp/v1/call/" .. method,
      {["Authorization"] = "Bearer " .. secret, ["Content-Type"] = type},
      read(dir .. "/" .. file))
  end
end
function request()
  next = next % #requests + 1
  return requests[next]
end
)lua");
    write_file(dir / "small",
               "add add.json application/json\nadd add.cbor application/cbor\n");
    write_file(dir / "large", "echo echo.json application/json\n");
    // Each kind in turn, 14 small calls (JSON, CBOR) for each large body
    // each way (a JSON string, a CBOR float32 array).
    std::string mixed;
    for (int i = 0; i < 7; ++i)
      mixed += "add add.json application/json\nadd add.cbor application/cbor\n";
    mixed += "echo echo.json application/json\n";
    for (int i = 0; i < 7; ++i)
      mixed += "add add.json application/json\nadd add.cbor application/cbor\n";
    mixed += "echo_floats echo_floats.cbor application/cbor\n";
    write_file(dir / "mixed", mixed);
  }
  requests(const requests&) = delete;
  requests& operator=(const requests&) = delete;
  ~requests() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  fs::path dir;
};

// What wrk said at the end of one run.
struct wrk_summary {
  long requests = 0;
  long not_2xx = 0;
  long socket_errors = 0;
  std::string text;
};

wrk_summary read_summary(const fs::path& path) {
  std::ifstream in(path);
  wrk_summary summary;
  for (std::string line; std::getline(in, line);) {
    summary.text += line + "\n";
    std::istringstream words(line);
    long n = 0;
    std::string word;
    if (line.find(" requests in ") != std::string::npos && (words >> n))
      summary.requests = n;
    else if (line.find("Non-2xx or 3xx responses:") != std::string::npos)
      summary.not_2xx = std::stol(line.substr(line.find(':') + 1));
    else if (line.find("Socket errors:") != std::string::npos)
      for (std::size_t at = line.find(' ', line.find(':')); at != std::string::npos;
           at = line.find(',', at + 1)) {
        auto number = line.find_first_of("0123456789", at);
        if (number == std::string::npos) break;
        summary.socket_errors += std::stol(line.substr(number));
      }
  }
  return summary;
}

class soak {
 public:
  soak(std::function<long()> calls, int node_pid, std::string url, std::string run_dir,
       int connections)
      : calls_(std::move(calls)),
        node_pid_(node_pid),
        url_(std::move(url)),
        run_dir_(std::move(run_dir)),
        connections_(connections),
        start_(steady::now()) {}

  const std::vector<sample>& samples() const { return samples_; }
  double now() const {
    return std::chrono::duration<double>(steady::now() - start_).count();
  }

  // wrk for `seconds` with the requests of `mix`, sampling once a second.
  wrk_summary load(const std::string& phase, const std::string& mix, int seconds) {
    auto out = requests_.dir / "wrk.out";
    std::vector<std::string> words = {"wrk",
                                      "-t2",
                                      "-c" + std::to_string(connections_),
                                      "-d" + std::to_string(seconds) + "s",
                                      "--timeout",
                                      "10s",
                                      "-s",
                                      (requests_.dir / "send.lua").string(),
                                      url_,
                                      "--",
                                      requests_.dir.string(),
                                      run_dir_,
                                      mix};
    pid_t child = ::fork();
    if (child < 0) fail(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {
      int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || ::dup2(fd, 1) < 0) ::_exit(126);
      std::vector<char*> argv;
      for (auto& word : words) argv.push_back(word.data());
      argv.push_back(nullptr);
      ::execvp("wrk", argv.data());
      ::_exit(127);
    }
    int status = 0;
    auto next = steady::now();
    for (;;) {
      next += std::chrono::seconds(1);
      std::this_thread::sleep_until(next);
      if (::waitpid(child, &status, WNOHANG) == child) break;
      take(phase);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail("wrk failed (status " + std::to_string(status) +
           "); is it installed (apt-get install wrk)?");
    auto summary = read_summary(out);
    if (summary.not_2xx || summary.socket_errors)
      fail("wrk saw " + std::to_string(summary.not_2xx) + " replies other than 2xx and " +
           std::to_string(summary.socket_errors) + " socket errors:\n" + summary.text);
    return summary;
  }

  // No calls for `seconds`, sampling once a second.
  void rest(const std::string& phase, int seconds) {
    auto next = steady::now();
    for (int i = 0; i < seconds; ++i) {
      next += std::chrono::seconds(1);
      std::this_thread::sleep_until(next);
      take(phase);
    }
  }

  void take(const std::string& phase) {
    sample s{now(),
             phase,
             static_cast<double>(status_field(node_pid_, "VmRSS")) / 1024,
             status_field(node_pid_, "Threads"),
             descriptors_of(node_pid_),
             0};
    // The node's count, by a call of its own (not counted), but after the
    // load: the call would keep a thread, and its connection, alive.
    s.calls = phase != "after" || samples_.empty() ? calls_() : samples_.back().calls;
    std::printf("%8.1f  %-6s %9.1f %8ld %12ld %12ld\n", s.seconds, s.phase.c_str(),
                s.rss_mib, s.threads, s.descriptors, s.calls);
    std::fflush(stdout);
    samples_.push_back(std::move(s));
  }

 private:
  std::function<long()> calls_;
  const int node_pid_;
  const std::string url_, run_dir_;
  const int connections_;
  const steady::time_point start_;
  requests requests_;
  std::vector<sample> samples_;
};

}  // namespace

// The graph, the same in this process and in the node's.
struct soak_program {
  explicit soak_program(bool python) {
    if (python)
      py = graph.add_node<PySoak>("soak");
    else
      cpp = graph.add_node<Soak>("soak");
  }
  lp::program graph{"bench_soak"};
  std::optional<lp::handle<Soak>> cpp;
  std::optional<lp::handle<PySoak>> py;
};

int main(int argc, char** argv) {
  bool python = false;
  for (int i = 1; i < argc; ++i)
    if (argv[i] == python_flag) python = true;
  for (int i = 1; i < argc; ++i)
    if (argv[i] == node_flag) {
      soak_program p(python);
      return lp::launch(p.graph, argc, argv);
    }
  bool quick = false;
  long calls = 10'000'000;
  int connections = 64, after = 40;
  std::string mix = "mixed";
  std::vector<std::string> node_flags;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--quick")
      quick = true;
    else if (arg == python_flag)
      continue;
    else if (arg == "--calls" && i + 1 < argc)
      calls = std::atol(argv[++i]);
    else if (arg == "--connections" && i + 1 < argc)
      connections = std::atoi(argv[++i]);
    else if (arg == "--after" && i + 1 < argc)
      after = std::atoi(argv[++i]);
    else if (arg == "--mix" && i + 1 < argc)
      mix = argv[++i];
    else if (arg == "--node-flag" && i + 1 < argc)
      node_flags.emplace_back(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--python] [--calls N] [--connections N] "
                   "[--mix small|large|mixed] [--after S] [--node-flag F]...\n",
                   argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  if (mix != "small" && mix != "large" && mix != "mixed") {
    std::fprintf(stderr, "bench_soak: --mix is small, large or mixed, not '%s'\n",
                 mix.c_str());
    return 2;
  }
  if (quick) {
    calls = std::min(calls, 300'000L);
    after = std::min(after, 10);
  }
  const int small_seconds = quick ? 5 : 20;
  const int segment_seconds = quick ? 5 : 30;
  try {
    soak_program p(python);
    lp::process_test_options options;
    options.executable = bench::this_executable();
    options.arguments = {std::string(node_flag)};
    if (python) {
      // Debian's interpreter (numpy, cbor2), and the checkout's package
      // and node module.
      options.arguments.emplace_back(python_flag);
      options.arguments.emplace_back("--lp_python=/usr/bin/python3");
      std::string path = BENCH_SOAK_PYTHONPATH;
      if (const char* more = std::getenv("PYTHONPATH")) path += std::string(":") + more;
      ::setenv("PYTHONPATH", path.c_str(), 1);
    }
    for (auto& flag : node_flags) options.arguments.push_back(flag);
    options.termination_notice = std::chrono::seconds(5);
    auto running = lp::launch<lp::test_multi_processing>(p.graph, options);
    std::function<long()> served;
    int node_pid = 0;
    if (python) {
      auto client = std::make_shared<lp::client<PySoak>>(running.client(*p.py));
      node_pid = client->pid();
      served = [client] { return client->calls(); };
    } else {
      auto client = std::make_shared<lp::client<Soak>>(running.client(*p.cpp));
      node_pid = client->pid();
      served = [client] { return client->calls(); };
    }
    soak run(served, node_pid, running.urls().at("soak"), running.run_dir(), connections);

    std::printf("%8s  %-6s %9s %8s %12s %12s\n", "seconds", "phase", "RSS MiB", "threads",
                "descriptors", "calls");
    run.take("idle");
    run.load("small", "small", small_seconds);
    const double before = run.samples().back().rss_mib;
    const long small_calls = served();
    const std::size_t load_begins = run.samples().size();
    const double load_began = run.now();
    long load_calls = 0;
    do {
      run.load("load", mix, segment_seconds);
      load_calls = served() - small_calls;
    } while (small_calls + load_calls < calls);
    const std::size_t load_ends = run.samples().size();
    const double load_ended = run.now();
    run.rest("after", after);
    if (!running.stop()) fail("the node: " + running.summary());

    const auto& s = run.samples();
    auto second_half = s.begin() + static_cast<std::ptrdiff_t>(
                                       load_begins + (load_ends - load_begins) / 2);
    auto [low, high] = std::minmax_element(
        second_half, s.begin() + static_cast<std::ptrdiff_t>(load_ends),
        [](const sample& a, const sample& b) { return a.rss_mib < b.rss_mib; });
    double peak = 0;
    for (std::size_t i = load_begins; i < load_ends; ++i)
      peak = std::max(peak, s[i].rss_mib);
    // The first sample after the load within `ratio` of the figure before.
    auto back_within = [&](double ratio) -> const sample* {
      for (std::size_t i = load_ends; i < s.size(); ++i)
        if (s[i].rss_mib <= ratio * before) return &s[i];
      return nullptr;
    };
    const sample* twice = back_within(2.0);
    const sample* near = back_within(1.1);
    const double load_seconds = load_ended - load_began;
    std::printf(
        "\n%s node, mix %s over %d connections: %ld calls in %.0f s (%.0f calls/s), "
        "after %ld small calls\n",
        python ? "Python" : "C++", mix.c_str(), connections, load_calls, load_seconds,
        static_cast<double>(load_calls) / load_seconds, small_calls);
    std::printf("RSS before the load (small calls):   %8.1f MiB\n", before);
    std::printf("RSS peak under the load:             %8.1f MiB\n", peak);
    std::printf("RSS over the load's second half:     %8.1f - %.1f MiB (%.2fx)\n",
                low->rss_mib, high->rss_mib, high->rss_mib / low->rss_mib);
    std::printf(
        "RSS at the end, %3d s after the load: %8.1f MiB (%.2fx the figure before)\n",
        after, s.back().rss_mib, s.back().rss_mib / before);
    if (twice)
      std::printf(
          "within 2x of the figure before:      %8.1f s after the load (goal <= 30 s)\n",
          twice->seconds - load_ended);
    else
      std::printf("within 2x of the figure before:      not within %d s (goal <= 30 s)\n",
                  after);
    if (near)
      std::printf("within 10%% of the figure before:     %8.1f s after the load\n",
                  near->seconds - load_ended);
    else
      std::printf("within 10%% of the figure before:     not within %d s\n", after);
    std::printf(
        "threads %ld -> %ld, descriptors %ld -> %ld (the load's last sample -> the "
        "end)\n",
        s[load_ends - 1].threads, s.back().threads, s[load_ends - 1].descriptors,
        s.back().descriptors);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_soak failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
