// End to end: programs launched with --lp_launch=slurm as jobs of a real
// Slurm (tools/local-slurm.sh start: four fake nodes on this machine), on
// loopback, every wait bounded, every job cancelled and every process killed
// on every path. With LP_SLURM_TEST_HOSTS=1, the nodes are test hosts of
// their own (tools/test-hosts.sh, tools/local-slurm.sh start --hosts).
// Programs with Python nodes run under the interpreter meson names
// (LP_NODE_PYTHON), with the checkout's python/ on PYTHONPATH (python_job).
#define DOCTEST_CONFIG_IMPLEMENT
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "processes/wire_words.hpp"

namespace {
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string env_path(const char* name) {
  const char* path = std::getenv(name);
  REQUIRE_MESSAGE(path, "meson sets ", name);
  return path;
}

using test_process::eventually;

// Runs a shell command line; its output, and whether it exited 0.
std::pair<bool, std::string> shell(const std::string& line) {
  std::string text;
  FILE* pipe = ::popen((line + " 2>&1").c_str(), "r");
  if (!pipe) return {false, ""};
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    text.append(buffer, n);
  return {::pclose(pipe) == 0, text};
}

bool slurm_answers() {
  return shell("timeout 10 sinfo --noheader").first;
}

// A scratch directory, which is also the jobs' --lp_slurm_dir.
struct scratch {
  scratch() {
    std::string pattern = "/tmp/lp-slurm-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()));
    path = pattern;
  }
  ~scratch() { std::filesystem::remove_all(path); }
  // The run directory of the one job submitted from here.
  std::string run_dir() const {
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.is_directory() && entry.path().filename().string().starts_with("lp-"))
        return entry.path().string();
    return "";
  }
  std::string path;
};

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A process's environment variable, from /proc (as the process started).
std::string environ_of(pid_t pid, const std::string& name) {
  auto all = file_text("/proc/" + std::to_string(pid) + "/environ");
  for (std::size_t start = 0; start < all.size();) {
    auto end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    auto entry = all.substr(start, end - start);
    if (entry.starts_with(name + "=")) return entry.substr(name.size() + 1);
    start = end + 1;
  }
  return "";
}

// Every process whose command line holds `part`, by pid.
std::vector<pid_t> processes_with(const std::string& part) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto command = file_text(entry.path().string() + "/cmdline");
    std::replace(command.begin(), command.end(), '\0', ' ');
    if (command.find(part) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// The node processes of a job submitted from `dir`: started by slurmstepd
// with LP_NODES, and not srun, whose environment has it too.
std::vector<pid_t> node_processes(const scratch& dir) {
  std::vector<pid_t> nodes;
  for (pid_t pid : processes_with("--dir=" + dir.path)) {
    auto comm = file_text("/proc/" + std::to_string(pid) + "/comm");
    if (comm.starts_with("srun") || environ_of(pid, "LP_NODES").empty()) continue;
    nodes.push_back(pid);
  }
  return nodes;
}

// A process's command line, word by word.
std::vector<std::string> argv_of(pid_t pid) {
  auto all = file_text("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> words;
  for (std::size_t start = 0; start < all.size();) {
    auto end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    words.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// A process's working directory; empty once it is gone.
std::string cwd_of(pid_t pid) {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", error)
      .string();
}

// The Python processes (`<interpreter> -m launchpad_client.runtime
// [--check] --node=...`) of a job submitted with TMPDIR=<dir>/tmp, which
// the job inherits (see python_job). --check: the supervisor's check of a
// class, before any node starts; else a Python node.
std::vector<pid_t> python_runtimes(const std::string& dir) {
  std::vector<pid_t> found;
  for (pid_t pid : processes_with(" -m launchpad_client.runtime ")) {
    auto argv = argv_of(pid);
    if (argv.size() >= 4 && argv[1] == "-m" && argv[2] == "launchpad_client.runtime" &&
        environ_of(pid, "TMPDIR") == dir + "/tmp")
      found.push_back(pid);
  }
  return found;
}

// A launcher run as a command (see command.hpp) whose job, if it submitted
// one, is cancelled when the test ends.
struct command : test_process::command {
  using test_process::command::command;
  ~command() {
    auto id = job();
    if (!id.empty()) {
      shell("scancel " + id);
      eventually([&] { return job_gone(id); }, 60s);
    }
  }
  // The id of the job it submitted, once it said so.
  std::string job() {
    auto all = output();
    auto at = all.find("[lp] submitted job ");
    if (at == std::string::npos) return "";
    at += 19;
    return all.substr(at, all.find_first_not_of("0123456789", at) - at);
  }
  // Neither pending nor running: Slurm forgot it, or it ended.
  static bool job_gone(const std::string& id) {
    auto [ok, text] = shell("squeue --noheader --jobs=" + id + " --format=%T");
    return !ok || text.empty() ||
           (text.find("PENDING") == std::string::npos &&
            text.find("RUNNING") == std::string::npos &&
            text.find("COMPLETING") == std::string::npos);
  }
};

// The flags every test launch passes: its run directory under the scratch
// directory, its nodes on loopback. On test hosts, each node listens on its
// host's address (the default, auto), and the job spreads over as many hosts
// as it can, so that its nodes call one another across hosts.
std::vector<std::string> slurm_flags(const scratch& dir) {
  if (const char* hosts = std::getenv("LP_SLURM_TEST_HOSTS");
      hosts && std::string(hosts) == "1")
    return {"--lp_launch=slurm", "--lp_slurm_dir=" + dir.path, "--lp_slurm_host=auto",
            "--lp_slurm_sbatch=--spread-job", "--lp_termination_notice_secs=5"};
  return {"--lp_launch=slurm", "--lp_slurm_dir=" + dir.path, "--lp_slurm_host=127.0.0.1",
          "--lp_termination_notice_secs=5"};
}

// A program with Python nodes, submitted from `cwd` as its user would
// (examples/python_learner/main.cpp says how to run it):
// - the interpreter: --lp_python, a path (Debian's python3, which has numpy
//   and cbor2; meson finds it). A bare name would be looked up on the PATH
//   of the node's host, as the job step has it;
// - PYTHONPATH: the checkout's python/ (the package launchpad_client). Like
//   every variable of the submitter's environment it reaches the batch
//   script (sbatch exports it all) and each job step (srun --export=ALL),
//   and the Python process inherits its node process's;
// - the working directory: a job step starts where sbatch ran, which is
//   where the launcher ran, and `python -m` puts its working directory
//   first on sys.path: a module beside the program (the example's
//   learner.py) imports without PYTHONPATH, as under local_mp;
// - TMPDIR, exported the same way, by which the test finds the Python
//   processes (their host writes no file for them). Nothing needs it set.
std::vector<std::string> python_job(const std::string& cwd, const std::string& binary,
                                    const scratch& dir,
                                    std::vector<std::string> more = {}) {
  std::filesystem::create_directories(dir.path + "/tmp");
  std::vector<std::string> args{"/usr/bin/env",
                                "-C",
                                cwd,
                                "PYTHONPATH=" + env_path("LP_PYTHON_PACKAGE_DIR"),
                                "TMPDIR=" + dir.path + "/tmp",
                                binary,
                                "--lp_python=" + env_path("LP_NODE_PYTHON")};
  for (auto& flag : slurm_flags(dir)) args.push_back(flag);
  for (auto& flag : more) args.push_back(flag);
  return args;
}

// The command line of a scenario of tests/processes, as a Slurm job.
std::vector<std::string> scenario(const std::string& name, const scratch& dir,
                                  std::vector<std::string> more = {}) {
  std::vector<std::string> args{env_path("LP_SLURM_PROGRAM"), "--scenario=" + name,
                                "--dir=" + dir.path};
  for (auto& flag : slurm_flags(dir)) args.push_back(flag);
  for (auto& flag : more) args.push_back(flag);
  return args;
}

// The total in a checkpoint of a LoudTally (a long, as CBOR: a non-negative
// one here) after the file's four header lines; -1 while there is none.
long saved_total(const std::string& path) {
  auto text = file_text(path);
  std::size_t at = 0;
  for (int line = 0; line < 4; ++line) {
    at = text.find('\n', at);
    if (at == std::string::npos) return -1;
    ++at;
  }
  if (at >= text.size() || static_cast<unsigned char>(text[at]) >> 5 != 0) return -1;
  unsigned info = static_cast<unsigned char>(text[at]) & 31u;
  if (info < 24) return info;
  std::size_t length = info == 24   ? 1
                       : info == 25 ? 2
                       : info == 26 ? 4
                       : info == 27 ? 8
                                    : 0;
  if (length == 0 || at + 1 + length > text.size()) return -1;
  long total = 0;
  for (std::size_t i = 1; i <= length; ++i)
    total = total << 8 | static_cast<unsigned char>(text[at + i]);
  return total;
}

std::vector<std::string> sleepers(const scratch& dir,
                                  std::vector<std::string> more = {}) {
  return scenario("sleepers", dir, std::move(more));
}

bool on_test_hosts() {
  const char* hosts = std::getenv("LP_SLURM_TEST_HOSTS");
  return hosts && std::string(hosts) == "1";
}

// The test host (K of lp-hK) of the node `label`, from the line where it
// said where it serves: https://10.231.0.K:port, or https://[fd00:1a7c::K]:port
// (http:// without TLS).
struct served_at {
  int host = 0;  // K of lp-hK
  int port = 0;
};
served_at where_serves(const std::string& output, const std::string& label) {
  auto said = "[" + label + "] [lp] " + label + " serving at http";
  auto at = output.find(said);
  if (at == std::string::npos) return {};
  at = output.find("://", at) + 3;
  auto url = output.substr(at, output.find_first_of(" \n", at) - at);
  auto colon = url.rfind(':');
  auto host = url.substr(0, colon);
  if (host.starts_with("[")) host = host.substr(1, host.size() - 2);
  return {std::atoi(host.c_str() + host.find_last_of(".:") + 1),
          std::atoi(url.c_str() + colon + 1)};
}

// A node cut off the network: nft rules in its host's namespace drop every
// packet to or from its port, on every interface, loopback too, so that no
// caller, local or not, and not the launcher, hears it. (Its host's slurmd
// stays on the network, which a cut of the whole host would take too: the
// batch host, which Slurm may give the node, runs the launcher.) Healed
// when it goes, whatever the test did.
struct network_cut {
  explicit network_cut(served_at node) : ns("lp-h" + std::to_string(node.host)) {
    auto port = std::to_string(node.port);
    auto done = shell(
        "printf '%s\\n' 'table inet lp_cut {' "
        "'chain in { type filter hook input priority -100; policy accept; tcp dport " +
        port + " drop; tcp sport " + port +
        " drop; }' "
        "'chain out { type filter hook output priority -100; policy accept; tcp dport " +
        port + " drop; tcp sport " + port +
        " drop; }' '}' "
        "| ip netns exec " +
        ns + " nft -f -");
    INFO(done.second);  // doctest's INFO captures in a lambda, which takes no binding
    REQUIRE(done.first);
  }
  void heal() {
    if (healed) return;
    healed = true;
    auto done = shell("ip netns exec " + ns + " nft delete table inet lp_cut");
    INFO(done.second);
    CHECK(done.first);
  }
  ~network_cut() { heal(); }
  std::string ns;
  bool healed = false;
};

// Whether a test that needs the test hosts and `tool` can run; if not, it
// says why, and fails where the run is meant to have them (CI).
bool test_hosts_with(const std::string& tool) {
  if (!on_test_hosts()) {
    MESSAGE("skipped: needs the test hosts (LP_SLURM_TEST_HOSTS=1)");
    return false;
  }
  if (shell("command -v " + tool).first) return true;
  if (std::getenv("LP_REQUIRE_SLURM"))
    FAIL("no " << tool
               << " on the test hosts' machine: apt-get install nftables tcpdump");
  MESSAGE("skipped: no " << tool << " (apt-get install nftables tcpdump)");
  return false;
}

}  // namespace

TEST_SUITE("slurm") {
  TEST_CASE(
      "consumer_producers as a Slurm job across fake nodes: exit 0, a log per node") {
    scratch dir;
    std::vector<std::string> args{env_path("LP_EXAMPLE_CONSUMER_PRODUCERS")};
    for (auto& flag : slurm_flags(dir)) args.push_back(flag);
    // Two task slots per host: the five processes take three hosts.
    args.push_back("--lp_slurm_sbatch=--ntasks-per-node=2");
    command launcher(args);
    auto status = launcher.exit_code(120s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(output.find("[consumer] sum of squares below 1000: 332833500") !=
          std::string::npos);
    CHECK(output.find(" runs on n[") != std::string::npos);  // more than one host
    auto run_dir = dir.run_dir();
    REQUIRE(!run_dir.empty());
    for (std::string log :
         {"consumer", "producers_0", "producers_1", "producers_2", "producers_3"})
      CHECK_MESSAGE(std::filesystem::exists(run_dir + "/logs/" + log + ".log"), log);
    CHECK(file_text(run_dir + "/result") == "0\n");
    CHECK_FALSE(std::filesystem::exists(run_dir + "/secret"));
    // Beyond loopback by default: TLS, its credentials gone with the job.
    CHECK(file_text(run_dir + "/logs/consumer.log").find("serving at https://") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(run_dir + "/tls.key"));
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE(
      "python_learner (C++ actors, a Python learner) as a Slurm job: exit 0, the learner "
      "serves over TLS on its host's address, and nothing is left") {
    scratch dir;
    auto example_dir = env_path("LP_EXAMPLE_PYTHON_LEARNER_DIR");
    command launcher(python_job(example_dir, env_path("LP_EXAMPLE_PYTHON_LEARNER"), dir));
    // While it runs (seconds): what the learner's node process gave its
    // Python process, read at once, and the learner's line in the run
    // directory's nodes file, which goes with the launch. (The supervisor
    // checks the class first, on the batch host, with the same
    // environment, directory and interpreter.)
    std::vector<std::string> runtime_argv;
    std::string runtime_cwd, runtime_pythonpath, published;
    bool caught = eventually(
        [&] {
          if (launcher.wait(0ms)) return true;  // ended, or never started one
          for (pid_t pid :
               runtime_argv.empty() ? python_runtimes(dir.path) : std::vector<pid_t>{}) {
            auto argv = argv_of(pid);
            auto cwd = cwd_of(pid);
            auto pythonpath = environ_of(pid, "PYTHONPATH");
            if (argv.size() != 4 || cwd.empty()) continue;  // a check, or gone meanwhile
            runtime_argv = argv;
            runtime_cwd = cwd;
            runtime_pythonpath = pythonpath;
          }
          if (published.empty() && !dir.run_dir().empty()) {
            auto nodes = file_text(dir.run_dir() + "/nodes");
            auto at = nodes.find("learner ");
            if (at != std::string::npos && nodes.find('\n', at) != std::string::npos)
              published = nodes.substr(at + 8, nodes.find('\n', at) - at - 8);
          }
          return !runtime_argv.empty() && !published.empty();
        },
        90s);
    auto status = launcher.exit_code(120s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(caught);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(output.find("average reward") != std::string::npos);  // an actor learned
    // The interpreter --lp_python named, the working directory sbatch ran
    // in, and the submitter's PYTHONPATH.
    REQUIRE_MESSAGE(!runtime_argv.empty(),
                    "the learner's Python process was not seen running");
    CHECK(runtime_argv[0] == env_path("LP_NODE_PYTHON"));
    CHECK(runtime_argv.size() == 4);
    if (runtime_argv.size() == 4)
      CHECK(runtime_argv[3] == "--node=python_learner/learner");
    CHECK(runtime_cwd == std::filesystem::canonical(example_dir).string());
    CHECK(runtime_pythonpath == env_path("LP_PYTHON_PACKAGE_DIR"));
    // Served over TLS, at its host's address (on test hosts, hK's own:
    // 10.231.0.K, or fd00:1a7c::K), as the run directory's nodes file says.
    auto said = std::string("[learner] [lp] learner serving at https://");
    auto at = output.find(said);
    REQUIRE(at != std::string::npos);
    auto url = output.substr(at + said.size() - 8);
    url = url.substr(0, url.find_first_of(" \n"));
    auto learner = where_serves(output, "learner");
    CHECK(learner.port > 0);
    if (on_test_hosts()) {
      CHECK((url.starts_with("https://10.231.0.") ||
             url.starts_with("https://[fd00:1a7c::")));
      CHECK(learner.host >= 1);
      CHECK(learner.host <= 4);
    } else {
      CHECK(url.starts_with("https://127.0.0.1:"));
    }
    auto run_dir = dir.run_dir();
    REQUIRE(!run_dir.empty());
    CHECK(published == url);
    CHECK_FALSE(std::filesystem::exists(run_dir + "/nodes"));
    CHECK(file_text(run_dir + "/logs/learner.log").find("learner serving at https://") !=
          std::string::npos);
    CHECK(file_text(run_dir + "/result") == "0\n");
    CHECK_FALSE(std::filesystem::exists(run_dir + "/tls.key"));
    // Nothing is left: no job, no process of it, no Python process, and no
    // file under TMPDIR (a Python node's spec, secret and key come over its
    // control socket).
    CHECK(command::job_gone(launcher.job()));
    CHECK(eventually([&] { return python_runtimes(dir.path).empty(); }, 10s));
    CHECK(eventually([&] { return processes_with("--lp_slurm_dir=" + dir.path).empty(); },
                     10s));
    CHECK(std::filesystem::is_empty(dir.path + "/tmp"));
  }

  TEST_CASE(
      "a Launchpad program (import launchpad as lp) as a Slurm job: consumer/producers "
      "over TLS, its description read on the job's hosts, and nothing is left") {
    if (!shell(env_path("LP_NODE_PYTHON") + " -c 'import cloudpickle'").first) {
      if (std::getenv("LP_REQUIRE_SLURM"))
        FAIL("lp.launch needs python3-cloudpickle: apt-get install python3-cloudpickle");
      MESSAGE("skipped: no cloudpickle for " << env_path("LP_NODE_PYTHON"));
      return;
    }
    scratch dir;
    std::filesystem::create_directories(dir.path + "/tmp");
    auto result_file = dir.path + "/result.json";
    // tests/launchpad/programs.py, as its user runs it: Debian's python3 (numpy,
    // cbor2, cloudpickle), which lp.launch passes on as --lp_python; the
    // checkout's python/ on PYTHONPATH, which the job inherits; the flags
    // after the result file go to lp.launch as lp_flags.
    std::vector<std::string> args{
        "/usr/bin/env",
        "-C",
        dir.path,
        "PYTHONPATH=" + env_path("LP_PYTHON_PACKAGE_DIR"),
        "TMPDIR=" + dir.path + "/tmp",
        "LP_LAUNCHPAD_LAUNCHER=" + env_path("LP_LAUNCHPAD_LAUNCHER"),
        env_path("LP_NODE_PYTHON"),
        env_path("LP_LAUNCHPAD_PROGRAMS"),
        "consumer_producers",
        "slurm",
        result_file};
    for (auto& flag : slurm_flags(dir)) args.push_back(flag);
    // Two task slots per host: on the fake hosts the four nodes take two.
    if (!on_test_hosts()) args.push_back("--lp_slurm_sbatch=--ntasks-per-node=2");
    command launcher(args);
    // The description goes under --lp_slurm_dir, which the job's hosts
    // share, not under TMPDIR: the job's node processes (job steps, with
    // LP_NODES) name it.
    auto description = dir.path + "/lp-launchpad-consumer_producers-";
    std::string step_read;
    eventually(
        [&] {
          if (launcher.wait(0ms)) return true;
          for (pid_t pid : processes_with(description)) {
            auto argv = argv_of(pid);
            if (argv.empty() || argv[0] != env_path("LP_LAUNCHPAD_LAUNCHER") ||
                environ_of(pid, "LP_NODES").empty())
              continue;
            for (const auto& word : argv)
              if (word.starts_with(description)) step_read = word;
          }
          return !step_read.empty();
        },
        120s);
    auto status = launcher.exit_code(180s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK_MESSAGE(step_read.starts_with(description),
                  "no job step named the description");
    CHECK(step_read.ends_with("/program.cbor"));
    // What the consumer saw: its producers' work through futures, values
    // echoed with their types, a remote error named.
    auto result = file_text(result_file);
    INFO(result);
    CHECK(result.find("\"work\": [1000, 101, 1002]") != std::string::npos);
    CHECK(result.find("{\"type\": \"ndarray\", \"dtype\": \"float32\", \"value\": [0.0, "
                      "1.0, 2.0, 3.0, 4.0]}") != std::string::npos);
    CHECK(result.find("RemoteError: producer/0.unsendable") != std::string::npos);
    // Every node served over TLS; on test hosts at its own host's address.
    for (std::string label : {"producer/0", "producer/1", "producer/2", "consumer/0"}) {
      CHECK_MESSAGE(output.find("[" + label + "] [lp] " + label +
                                " serving at https://") != std::string::npos,
                    label);
      if (on_test_hosts()) {
        auto node = where_serves(output, label);
        CHECK_MESSAGE((node.host >= 1 && node.host <= 4), label);
      }
    }
    auto run_dir = dir.run_dir();
    REQUIRE(!run_dir.empty());
    CHECK(file_text(run_dir + "/result") == "0\n");
    CHECK_FALSE(std::filesystem::exists(run_dir + "/secret"));
    CHECK_FALSE(std::filesystem::exists(run_dir + "/tls.key"));
    // Nothing is left: no job, no process of it, no Python process, no
    // description, nothing under TMPDIR.
    CHECK(command::job_gone(launcher.job()));
    CHECK(eventually([&] { return python_runtimes(dir.path).empty(); }, 10s));
    CHECK(eventually([&] { return processes_with(description).empty(); }, 10s));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path))
      CHECK_MESSAGE(!entry.path().filename().string().starts_with("lp-launchpad-"),
                    entry.path().string());
    CHECK(std::filesystem::is_empty(dir.path + "/tmp"));
  }

  TEST_CASE(
      "a Launchpad program's group settings as a Slurm job: restart_on_failure restarts "
      "its "
      "node in a new step, with the group's environment and resources") {
    if (!shell(env_path("LP_NODE_PYTHON") + " -c 'import cloudpickle'").first) {
      if (std::getenv("LP_REQUIRE_SLURM"))
        FAIL("lp.launch needs python3-cloudpickle: apt-get install python3-cloudpickle");
      MESSAGE("skipped: no cloudpickle for " << env_path("LP_NODE_PYTHON"));
      return;
    }
    scratch dir;
    std::filesystem::create_directories(dir.path + "/tmp");
    auto notes = dir.path + "/notes";
    std::filesystem::create_directories(notes);
    // tests/launchpad/groups.py: group flaky's node fails once, against one
    // restart, then stops the program; group plain notes its environment.
    auto groups = std::filesystem::path(env_path("LP_LAUNCHPAD_PROGRAMS"))
                      .replace_filename("groups.py")
                      .string();
    std::vector<std::string> args{
        "/usr/bin/env",
        "-C",
        dir.path,
        "PYTHONPATH=" + env_path("LP_PYTHON_PACKAGE_DIR"),
        "TMPDIR=" + dir.path + "/tmp",
        "LP_LAUNCHPAD_LAUNCHER=" + env_path("LP_LAUNCHPAD_LAUNCHER"),
        env_path("LP_NODE_PYTHON"),
        groups,
        "slurm",
        notes,
        "1",
        "1"};
    for (auto& flag : slurm_flags(dir)) args.push_back(flag);
    command launcher(args);
    auto status = launcher.exit_code(180s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(output.find("[lp] node flaky/0 exited with status 1; restarting it in 50 ms "
                      "(restart 1 of 1)") != std::string::npos);
    // Both attempts saw the group's environment (its env and
    // local_resources'); the other group saw neither.
    std::string own =
        R"("env": {"GROUPS_TEST_COLOR": "blue", "GROUPS_TEST_SHADE": "dark"})";
    CHECK(file_text(notes + "/attempt_0").find(own) != std::string::npos);
    CHECK(file_text(notes + "/attempt_1").find(own) != std::string::npos);
    CHECK(file_text(notes + "/ok") == "1");
    CHECK(file_text(notes + "/plain").find(R"("GROUPS_TEST_COLOR": null)") !=
          std::string::npos);
    CHECK(command::job_gone(launcher.job()));
    CHECK(eventually([&] { return python_runtimes(dir.path).empty(); }, 10s));
    CHECK(std::filesystem::is_empty(dir.path + "/tmp"));
  }

  TEST_CASE(
      "a Python node whose module does not import: the job fails before any node starts, "
      "naming the node and the module, with no restart") {
    scratch dir;
    // Submitted from the scratch directory, which holds no such module; its
    // group restarts failed nodes three times, which cannot help here. The
    // supervisor checks every Python class before it starts any node.
    command launcher(python_job(dir.path, env_path("LP_SLURM_PYTHON_MISSING"), dir));
    auto status = launcher.exit_code(120s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(output.find("Python node 'ghosts/0' could not start") != std::string::npos);
    CHECK(output.find(
              "[lp] ghosts/0: cannot import module 'lp_test_no_such_module' for the "
              "Python node") != std::string::npos);
    CHECK(output.find("ModuleNotFoundError: No module named 'lp_test_no_such_module'") !=
          std::string::npos);
    CHECK(launcher.count("restarting") == 0);
    CHECK(launcher.count("serving at") == 0);  // not even the C++ node
    auto run_dir = dir.run_dir();
    REQUIRE(!run_dir.empty());
    CHECK(file_text(run_dir + "/result") == "1\n");
    CHECK(command::job_gone(launcher.job()));
    CHECK(eventually([&] { return python_runtimes(dir.path).empty(); }, 10s));
    CHECK(eventually([&] { return processes_with("--lp_slurm_dir=" + dir.path).empty(); },
                     10s));
    CHECK(std::filesystem::is_empty(dir.path + "/tmp"));
  }

  TEST_CASE(
      "--lp_slurm_detach returns the job id; the job has the group's resources and "
      "partition") {
    scratch dir;
    command launcher(sleepers(dir, {"--group=sleepers", "--cpus=2", "--memory_mb=300",
                                    "--lp_slurm_partition=debug", "--lp_slurm_detach"}));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status == 0);
    auto job = launcher.job();
    REQUIRE(!job.empty());
    CHECK(output.find("\n" + job + "\n") != std::string::npos);  // the bare id on stdout
    auto job_shown = shell("scontrol show job " + job);
    auto shown = job_shown.second;  // INFO cannot take a structured binding (clang 14)
    INFO(shown);
    CHECK(job_shown.first);
    CHECK(shown.find("Partition=debug") != std::string::npos);
    CHECK(shown.find("NumTasks=3") != std::string::npos);
    CHECK(shown.find("CPUs/Task=2") != std::string::npos);
    CHECK(shown.find("MinMemoryCPU=150M") != std::string::npos);
    // Each node's step asks for exactly its group's resources.
    REQUIRE(eventually([&] { return node_processes(dir).size() == 3; }, 60s));
    auto steps = shell("scontrol show step " + job).second;
    INFO(steps);
    CHECK(steps.find("Name=sleepers/0 ") != std::string::npos);
    CHECK(steps.find("TRES=cpu=2,mem=300M,node=1") != std::string::npos);
    // The orderly stop the detached launcher advises: every node's on_stop runs.
    CHECK(shell("scancel --batch --signal=TERM " + job).first);
    CHECK(eventually([&] { return command::job_gone(job); }, 60s));
    auto run_dir = dir.run_dir();
    CHECK(file_text(run_dir + "/result") == "0\n");
    for (int i = 0; i < 3; ++i)
      CHECK(std::filesystem::exists(dir.path + "/sleepers-" + std::to_string(i) +
                                    ".stopped"));
  }

  TEST_CASE("peers that call each other, and a node that waits for their runs: exit 0") {
    scratch dir;
    command launcher(scenario("mutual", dir));
    auto status = launcher.exit_code(120s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    // Written once lp::wait_for_runs("peers") returned: both runs had ended.
    CHECK(file_text(dir.path + "/runs.done") == "50,50");
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE("a group's environment reaches its job steps, and only them") {
    scratch dir;
    command launcher(scenario("environment", dir));
    auto status = launcher.exit_code(120s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    auto learner = file_text(dir.path + "/learner.where");
    auto others = file_text(dir.path + "/others.where");
    INFO(learner, " / ", others);
    CHECK(learner.find(" --xla_lp_test=1 ") != std::string::npos);
    CHECK(others.find("--xla_lp_test") == std::string::npos);
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE("kill -9 of one node's task: the job ends, and the launcher names the node") {
    scratch dir;
    command launcher(sleepers(dir));
    std::vector<pid_t> nodes;
    REQUIRE(eventually([&] { return (nodes = node_processes(dir)).size() == 3; }, 60s));
    auto victim = environ_of(nodes[1], "LP_NODES");
    REQUIRE(!victim.empty());
    // Killed once it serves on its unix socket, which it cannot remove.
    auto socket = victim;
    socket.replace(socket.find('/'), 1, "%2F");
    socket = dir.run_dir() + "/sockets/" + socket + ".sock";
    CHECK(eventually([&] { return std::filesystem::exists(socket); }, 60s));
    ::kill(nodes[1], SIGKILL);
    auto status = launcher.exit_code(60s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(output.find("[lp] node " + victim + " failed: killed by signal SIGKILL") !=
          std::string::npos);
    CHECK(command::job_gone(launcher.job()));
    CHECK(eventually([&] { return node_processes(dir).empty(); }, 10s));
    // The job's end took the dead node's socket, and the directory.
    CHECK_FALSE(std::filesystem::exists(dir.run_dir() + "/sockets"));
  }

  TEST_CASE(
      "Ctrl+C of the submitting launcher: the job stops in order, and nothing is left") {
    scratch dir;
    command launcher(sleepers(dir));
    std::vector<pid_t> nodes;
    REQUIRE(eventually([&] { return (nodes = node_processes(dir)).size() == 3; }, 60s));
    ::kill(launcher.pid, SIGINT);
    auto status = launcher.exit_code(60s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(output.find("[lp] SIGINT: stopping job " + launcher.job()) !=
          std::string::npos);
    CHECK(command::job_gone(launcher.job()));
    // Slurm may call the job gone a moment before its step daemon has reaped
    // the last node process.
    for (pid_t pid : nodes) CHECK(eventually([&] { return ::kill(pid, 0) != 0; }, 10s));
    CHECK(eventually([&] { return processes_with("--dir=" + dir.path).empty(); }, 10s));
    for (int i = 0; i < 3; ++i)
      CHECK(std::filesystem::exists(dir.path + "/sleepers-" + std::to_string(i) +
                                    ".stopped"));
  }

  TEST_CASE(
      "scancel of the job, which signals every process of it: a clean stop, final "
      "checkpoints") {
    scratch dir;
    command launcher(scenario("saved_on_stop", dir,
                              {"--lp_checkpoint_dir=" + dir.path + "/checkpoints"}));
    std::vector<pid_t> nodes;
    REQUIRE(eventually([&] { return (nodes = node_processes(dir)).size() == 3; }, 60s));
    REQUIRE(eventually([&] { return launcher.count("serving at") == 3; }, 60s));
    auto job = launcher.job();
    CHECK(shell("scancel " + job).first);
    auto status = launcher.exit_code(60s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(launcher.count(" failed: ") == 0);
    CHECK(launcher.count("killing every node") == 0);
    CHECK(launcher.count("restarting") == 0);
    CHECK(file_text(dir.run_dir() + "/result") == "0\n");
    CHECK(std::filesystem::exists(dir.path + "/checkpoints/tally/0.ckpt"));
    // Its end says where the checkpoints are, and how to go on from them.
    CHECK(output.find("[lp] this launch's checkpoints are in " + dir.path +
                      "/checkpoints; to go on from them:") != std::string::npos);
    CHECK(output.find(" --lp_resume=" + dir.path + "/checkpoints") != std::string::npos);
    for (int i = 0; i < 2; ++i)
      CHECK(std::filesystem::exists(dir.path + "/sleepers-" + std::to_string(i) +
                                    ".stopped"));
    CHECK(command::job_gone(job));
    for (pid_t pid : nodes) CHECK(eventually([&] { return ::kill(pid, 0) != 0; }, 10s));
  }

  TEST_CASE("a second Ctrl+C of the submitting command ends the nodes at once") {
    scratch dir;
    command launcher(scenario("stubborn", dir));  // its on_stop takes 30 s
    std::vector<pid_t> nodes;
    REQUIRE(eventually([&] { return (nodes = node_processes(dir)).size() == 1; }, 60s));
    REQUIRE(eventually([&] { return launcher.count("serving at") == 1; }, 60s));
    ::kill(launcher.pid, SIGINT);
    REQUIRE(eventually([&] { return launcher.count("[lp] SIGINT: stopping job") == 1; },
                       30s));
    // From another process: the same one's SIGINT this soon would only
    // repeat the first.
    auto second_at = clock_type::now();
    CHECK(shell("kill -INT " + std::to_string(launcher.pid)).first);
    auto status = launcher.exit_code(60s);
    auto took = clock_type::now() - second_at;
    INFO(launcher.output());
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(launcher.count("[lp] cancelling job " + launcher.job() + " at once") == 1);
    // Not Slurm's KillWait (20 s here, tools/local-slurm.sh), which a cancel
    // of the job alone gives: half of it, whatever the machine's load.
    CHECK(took < 10s);
    CHECK(command::job_gone(launcher.job()));
    for (pid_t pid : nodes) CHECK(eventually([&] { return ::kill(pid, 0) != 0; }, 10s));
  }

  TEST_CASE(
      "what a node starts ends with it: after Ctrl+C, and after kill -9 and scancel") {
    // The local cluster tracks a step's processes by parentage
    // (proctrack/linuxproc), which the spawner's grandchild, orphaned at
    // once, has lost: only the node's own group reaper can end it.
    auto pid_in = [](const scratch& dir, const std::string& name) {
      auto text = file_text(dir.path + "/" + name);
      return text.empty() || text.back() != '\n' ? pid_t{0}
                                                 : static_cast<pid_t>(std::stol(text));
    };
    for (bool launcher_killed : {false, true}) {
      CAPTURE(launcher_killed);
      scratch dir;
      command launcher(scenario("spawner", dir));
      REQUIRE(eventually([&] { return pid_in(dir, "great-grandchild.pid") > 0; }, 60s));
      std::vector<pid_t> started{pid_in(dir, "grandchild.pid"),
                                 pid_in(dir, "great-grandchild.pid")};
      REQUIRE(started[0] > 0);
      auto job = launcher.job();
      if (launcher_killed) {
        ::kill(launcher.pid, SIGKILL);  // the job runs on, as documented
        launcher.exit_code(10s);
        CHECK(shell("scancel " + job).first);
      } else {
        ::kill(launcher.pid, SIGINT);
        auto status = launcher.exit_code(60s);
        INFO(launcher.output());
        CHECK(status == std::optional<int>(0));
      }
      CHECK(eventually([&] { return command::job_gone(job); }, 60s));
      CHECK(eventually(
          [&] {
            return std::none_of(started.begin(), started.end(),
                                [](pid_t pid) { return ::kill(pid, 0) == 0; });
          },
          10s));
      for (pid_t pid : started)
        ::kill(pid, SIGKILL);  // nothing left behind, whatever failed
    }
  }

  TEST_CASE(
      "SIGTERM at a random moment to 16 actors hammering one node: exit 0, 5 times") {
    std::mt19937 random(20261204);
    for (int round = 0; round < 5; ++round) {
      CAPTURE(round);
      scratch dir;
      command launcher(scenario("hammer", dir));
      REQUIRE(eventually([&] { return launcher.count("serving at") == 17; }, 60s));
      std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
      ::kill(launcher.pid, SIGTERM);  // what Ctrl+C does too
      auto status = launcher.exit_code(60s);
      auto output = launcher.output();
      INFO(output);
      REQUIRE(status.has_value());
      CHECK(*status == 0);
      CHECK(launcher.count("failed") == 0);
      // The nodes heard of the stop; none asked for it.
      CHECK(launcher.count("asked the program to stop") == 0);
      CHECK(command::job_gone(launcher.job()));
      for (int g = 0; g < 4; ++g)
        for (int i = 0; i < 4; ++i)
          CHECK(std::filesystem::exists(dir.path + "/actors" + std::to_string(g) + "-" +
                                        std::to_string(i) + ".stopped"));
    }
  }

  TEST_CASE("an actor that throws its own error during the stop still makes the exit 1") {
    scratch dir;
    // No node hangs here: a notice as long as a loaded machine may need to
    // stop 17 of them, so that only the actor's own error can fail the run.
    command launcher(scenario("hammer_fails", dir, {"--lp_termination_notice_secs=30"}));
    REQUIRE(eventually([&] { return launcher.count("serving at") == 17; }, 60s));
    ::kill(launcher.pid, SIGTERM);
    auto status = launcher.exit_code(60s);
    INFO(launcher.output());
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(launcher.count("an error of the actor's own, while stopping") >= 1);
    CHECK(launcher.count("[lp] node actors0 failed: exited with status 1") >= 1);
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE("a group's restart policy: each restart is a new job step") {
    scratch dir;
    command launcher(scenario("flaky", dir));
    // Crashes twice, then serves.
    REQUIRE(eventually(
        [&] {
          return launcher.output().find("[flaky/0] [lp] flaky/0 serving at") !=
                 std::string::npos;
        },
        60s));
    auto output = launcher.output();
    CHECK(output.find(
              "[lp] node flaky/0 exited with status 3; restarting it in 50 ms (restart 1 "
              "of 3)") != std::string::npos);
    CHECK(output.find("(restart 2 of 3)") != std::string::npos);
    ::kill(launcher.pid, SIGINT);
    auto status = launcher.exit_code(60s);
    INFO(launcher.output());
    CHECK(status == 0);
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE(
      "kill -9 of a checkpointed node's task: it restarts from its last checkpoint") {
    scratch dir;
    auto file = dir.path + "/checkpoints/tally/0.ckpt";
    command launcher(
        scenario("tallied", dir, {"--lp_checkpoint_dir=" + dir.path + "/checkpoints"}));
    for (int round = 1; round <= 2; ++round) {
      CAPTURE(round);
      // The adder keeps adding while the tally saves every 100 ms: any
      // moment is between two checkpoints. Wait for a save of a total this
      // round's process added to.
      long before = std::max(saved_total(file), 0L);
      REQUIRE(eventually([&] { return saved_total(file) > before; }, 60s));
      std::vector<pid_t> tally;
      REQUIRE(eventually(
          [&] {
            tally.clear();
            for (pid_t pid : node_processes(dir))
              if (environ_of(pid, "LP_NODES") == "tally/0") tally.push_back(pid);
            return tally.size() == 1;
          },
          60s));
      // What it restores lies between the last save seen before the kill
      // and the file once it restored: the restarted process saves only
      // after it restored, and a loaded machine may let it do so before
      // this thread looks again.
      long before_kill = saved_total(file);
      REQUIRE(before_kill > before);
      ::kill(tally[0], SIGKILL);
      auto restarting = "[lp] node tally/0 killed by signal SIGKILL; restarting it in";
      REQUIRE(eventually(
          [&] { return launcher.count(restarting) == static_cast<std::size_t>(round); },
          60s));
      auto restored = "[tally/0] restored a total of ";
      REQUIRE(eventually(
          [&] { return launcher.count(restored) == static_cast<std::size_t>(round); },
          60s));
      long after = saved_total(file);
      auto output = launcher.output();
      auto at = output.rfind(restored) + std::string(restored).size();
      INFO(output);
      long total = std::stol(output.substr(at, output.find('\n', at) - at));
      CHECK(total >= before_kill);
      CHECK(total <= after);
    }
    ::kill(launcher.pid, SIGINT);
    auto status = launcher.exit_code(60s);
    INFO(launcher.output());
    CHECK(status == std::optional<int>(0));
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE(
      "a run() that deadlocks itself past its health_timeout: the job fails, naming it") {
    scratch dir;
    command launcher(scenario("stuck", dir));
    auto status = launcher.exit_code(60s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(output.find(
              "[lp] node stuck/0 failed: hung: its run() made no sign of progress") !=
          std::string::npos);
    CHECK(command::job_gone(launcher.job()));
  }

  TEST_CASE("a bad --lp_slurm_ flag is a usage error") {
    scratch dir;
    command launcher(sleepers(dir, {"--lp_slurm_sbatch=qos=high"}));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    CHECK(status == 2);
    CHECK(output.find("--lp_slurm_sbatch=qos=high: give one sbatch option, e.g. "
                      "--lp_slurm_sbatch=--qos=high") != std::string::npos);
    CHECK(launcher.job().empty());
  }

  TEST_CASE(
      "a request larger than any host of the partition: a clear error, nothing pending") {
    scratch dir;
    command launcher(sleepers(dir, {"--group=sleepers", "--cpus=64"}));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 1);
    CHECK(
        output.find("the process of sleepers/0 asks for 64 CPUs, but the largest host of "
                    "partition debug has 4") != std::string::npos);
    CHECK(output.find("Nothing was submitted") != std::string::npos);
    CHECK(launcher.job().empty());
    CHECK(shell("squeue --noheader --name=lp-scenario_sleepers").second.empty());
    CHECK(dir.run_dir().empty());
  }

  TEST_CASE(
      "more processes than the partition holds at once: a clear error, nothing pending") {
    scratch dir;
    command launcher(scenario("many", dir));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    CHECK(status == 1);
    CHECK(output.find(
              "the program runs 64 processes of 1 CPU(s) each, but partition debug holds "
              "at most 16 at once") != std::string::npos);
    CHECK(launcher.job().empty());
    CHECK(dir.run_dir().empty());
  }

  TEST_CASE("a partition that does not exist: a clear error naming the ones that do") {
    scratch dir;
    command launcher(sleepers(dir, {"--lp_slurm_partition=nope"}));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    CHECK(status == 1);
    CHECK(output.find("there is no partition nope; choose one with --lp_slurm_partition "
                      "(sinfo lists: debug)") != std::string::npos);
  }

  TEST_CASE(
      "--lp_dry_run prints the batch script and each node's step, and submits nothing") {
    scratch dir;
    command launcher(sleepers(dir, {"--group=sleepers", "--cpus=2", "--memory_mb=300",
                                    "--lp_slurm_partition=debug", "--lp_slurm_time=10:00",
                                    "--lp_slurm_sbatch=--qos=normal", "--lp_dry_run"}));
    auto status = launcher.exit_code(30s);
    auto output = launcher.output();
    INFO(output);
    CHECK(status == 0);
    for (std::string line :
         {"#SBATCH --job-name=lp-scenario_sleepers\n", "#SBATCH --ntasks=3\n",
          "#SBATCH --cpus-per-task=2\n", "#SBATCH --mem-per-cpu=150M\n",
          "#SBATCH --partition=debug\n", "#SBATCH --time=10:00\n",
          "#SBATCH --qos=normal\n", "#SBATCH --signal=B:TERM@35\n",
          "export LP_SLURM_RUN_DIR\n",
          "sleepers/2: srun --nodes=1 --ntasks=1 --exact --job-name=sleepers/2 "
          "--export=ALL "
          "--cpus-per-task=2 --mem=300M "})
      CHECK_MESSAGE(output.find(line) != std::string::npos, line);
    CHECK(launcher.job().empty());
    CHECK(dir.run_dir().empty());
    CHECK(shell("squeue --noheader --name=lp-scenario_sleepers").second.empty());
  }

  TEST_CASE(
      "steps on one host call each other over unix sockets in the run directory, their "
      "arrays through shared memory; steps on other hosts cross the network; nothing is "
      "left") {
    // What crossed to test host K: its veth's bytes, both ways, as the root
    // namespace's end (lp-vK, a port of the bridge) counts them.
    auto veth_bytes = [](int host) {
      long long total = 0;
      for (const char* way : {"rx_bytes", "tx_bytes"}) {
        long long bytes = 0;
        std::ifstream("/sys/class/net/lp-v" + std::to_string(host) + "/statistics/" +
                      way) >>
            bytes;
        total += bytes;
      }
      return total;
    };
    // A node's shared_memory.messages, from its metrics, asked over its
    // unix socket (plain HTTP with the secret; the path reaches it from any
    // network namespace of this kernel); -1 if it did not answer.
    auto shared_messages = [](const std::string& socket, const std::string& secret) {
      auto [ok, text] =
          shell("curl -s --max-time 20 --unix-socket '" + socket +
                "' -H 'Accept: application/json' -H 'Authorization: Bearer " + secret +
                "' http://localhost/lp/v1/metrics");
      auto at = text.find("\"shared_memory\"");
      if (!ok || at == std::string::npos) return -1L;
      at = text.find("\"messages\":", at);
      return at == std::string::npos ? -1L : std::atol(text.c_str() + at + 11);
    };
    if (!shell("command -v curl").first) {
      if (std::getenv("LP_REQUIRE_SLURM")) FAIL("no curl: apt-get install curl");
      MESSAGE("skipped: no curl (apt-get install curl)");
      return;
    }
    for (bool off :
         on_test_hosts() ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
      CAPTURE(off);
      scratch dir;
      std::vector<long long> before;
      for (int host = 1; host <= 4; ++host) before.push_back(veth_bytes(host));
      command launcher(scenario("bulk", dir,
                                off ? std::vector<std::string>{"--lp_same_host=off"}
                                    : std::vector<std::string>{}));
      // The caller's 5 calls of 4 MB each way, then it serves until the stop.
      std::string calls;
      eventually(
          [&] {
            if (launcher.wait(0ms)) return true;
            calls = file_text(dir.path + "/bulk.calls");
            return !calls.empty();
          },
          120s);
      INFO(launcher.output());
      REQUIRE_MESSAGE(!calls.empty(), "the caller did not finish its calls");
      int whole = -1, shared = -1;
      std::istringstream(calls) >> whole >> shared;
      CHECK(whole == 5);
      auto run_dir = dir.run_dir();
      REQUIRE(!run_dir.empty());
      auto sockets = run_dir + "/sockets";
      // The job's logs reach the submitter a moment later.
      CHECK(eventually(
          [&] {
            return where_serves(launcher.output(), "mirror/0").port > 0 &&
                   where_serves(launcher.output(), "caller/0").port > 0;
          },
          30s));
      auto mirror = where_serves(launcher.output(), "mirror/0");
      auto caller = where_serves(launcher.output(), "caller/0");
      std::string secret;
      std::ifstream(run_dir + "/secret") >> secret;
      REQUIRE(!secret.empty());
      if (off) {
        CHECK_FALSE(std::filesystem::exists(sockets));
        CHECK(shared == 0);
      } else {
        // Each step made its socket in the job's run directory, the
        // directory its user's alone and the sockets too, whichever host
        // it runs on.
        struct stat about {};
        REQUIRE(::stat(sockets.c_str(), &about) == 0);
        CHECK((about.st_mode & 0777) == 0700);
        for (std::string file : {"mirror%2F0.sock", "caller%2F0.sock"}) {
          CAPTURE(file);
          REQUIRE(::stat((sockets + "/" + file).c_str(), &about) == 0);
          CHECK(S_ISSOCK(about.st_mode));
          CHECK((about.st_mode & 0777) == 0600);
        }
        auto messages = shared_messages(sockets + "/mirror%2F0.sock", secret);
        MESSAGE("replies in shared memory: ", shared,
                " of 5; the mirror's messages "
                "through shared memory: ",
                messages);
        if (on_test_hosts()) {
          // Hosts of their own (a whole host each): one kernel and one file
          // system, but other network namespaces. The caller never took the
          // mirror's socket: no array went through shared memory, and 40 MB
          // crossed to the mirror's host over the bridge.
          REQUIRE(mirror.host >= 1);
          REQUIRE(mirror.host <= 4);
          CHECK(caller.host != mirror.host);
          CHECK(shared == 0);
          CHECK(messages == 0);
          auto crossed = veth_bytes(mirror.host) - before[mirror.host - 1];
          MESSAGE("crossed to the mirror's host h", mirror.host, ": ", crossed, " bytes");
          CHECK(crossed >= 40'000'000);
        } else {
          // One host (the fake Slurm nodes are this machine): over the
          // socket, the arrays through shared memory, from the second call on.
          CHECK(shared >= 3);
          CHECK(messages >= 3);
        }
      }
      // The stop the detached launcher advises; the job records 0.
      CHECK(shell("scancel --batch --signal=TERM " + launcher.job()).first);
      auto status = launcher.exit_code(120s);
      REQUIRE(status.has_value());
      CHECK(*status == 0);
      CHECK(file_text(run_dir + "/result") == "0\n");
      // Each node took its socket away, and the job's end the directory.
      CHECK_FALSE(std::filesystem::exists(sockets));
      CHECK_FALSE(std::filesystem::exists(run_dir + "/secret"));
      CHECK(command::job_gone(launcher.job()));
      CHECK(eventually([&] { return node_processes(dir).empty(); }, 30s));
    }
  }

  TEST_CASE(
      "on the wire between test hosts: TLS hides the secret and the payload; off shows "
      "both") {
    if (!test_hosts_with("tcpdump")) return;
    // What crosses the test hosts' network while the talker and the echo,
    // each on a host of its own, talk: every packet, whole. The bridge
    // forwards between its ports (the hosts' veths) without showing the
    // frames on its own interface: the capture takes every interface, and
    // keeps the test hosts' addresses.
    auto capture_run = [](const std::vector<std::string>& more) {
      scratch dir;
      auto pcap = dir.path + "/wire.pcap";
      test_process::command tcpdump({"/usr/bin/env", "tcpdump", "-i", "any", "-U", "-s",
                                     "0", "-w", pcap,
                                     "net 10.231.0.0/24 or net fd00:1a7c::/64"});
      REQUIRE(eventually(
          [&] { return tcpdump.output().find("listening on") != std::string::npos; },
          10s));
      command launcher(scenario("wire", dir, more));
      std::string secret, key_line;
      REQUIRE(eventually(
          [&] {
            auto run_dir = dir.run_dir();
            if (!run_dir.empty())
              std::ifstream(run_dir + "/secret") >> secret;  // its line
            return !secret.empty();
          },
          30s));
      // A line of the TLS key's PEM, past its header: 64 characters of it.
      std::ifstream(dir.run_dir() + "/tls.key") >> key_line >> key_line >> key_line >>
          key_line;
      auto status = launcher.exit_code(120s);
      INFO(launcher.output());
      REQUIRE(status.has_value());
      CHECK(*status == 0);
      CHECK(launcher.count("[talker/0] the echo said it 20 times") == 1);
      CHECK(where_serves(launcher.output(), "talker/0").host !=
            where_serves(launcher.output(), "echo/0").host);
      ::kill(tcpdump.pid, SIGINT);
      REQUIRE(tcpdump.wait(10s));
      auto packets = file_text(pcap);
      CHECK(packets.size() > 10000);  // the run's traffic is in it
      // Neither the secret nor the key crosses in Slurm's messages either,
      // which carry a step's environment in the clear: a node reads them
      // from the run directory.
      if (!key_line.empty()) CHECK(packets.find(key_line) == std::string::npos);
      return std::pair{packets.find(secret) != std::string::npos,
                       packets.find(scenarios::wire_words) != std::string::npos};
    };
    auto [secret_seen, words_seen] = capture_run({});
    CHECK_FALSE(secret_seen);
    CHECK_FALSE(words_seen);
    // The same run in plain HTTP: the check can fail.
    auto [plain_secret_seen, plain_words_seen] = capture_run({"--lp_tls=off"});
    CHECK(plain_secret_seen);
    CHECK(plain_words_seen);
  }

  TEST_CASE(
      "a node cut off the network for less than its health_timeout: calls run out of "
      "time, then "
      "go through; nothing acknowledged is lost") {
    if (!test_hosts_with("nft")) return;
    scratch dir;
    command launcher(scenario("partitioned_patient", dir));
    REQUIRE(
        eventually([&] { return launcher.count("[caller/0] acknowledged ") >= 2; }, 90s));
    auto counter = where_serves(launcher.output(), "counter/0");
    INFO(launcher.output());
    REQUIRE(counter.port > 0);
    {
      network_cut cut(counter);
      std::this_thread::sleep_for(1500ms);  // of the group's 10 s
    }
    auto status = launcher.exit_code(90s);
    auto output = launcher.output();
    INFO(output);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    CHECK(output.find("unreachable") == std::string::npos);
    auto at = output.find("[caller/0] after the cut: acknowledged ");
    REQUIRE(at != std::string::npos);
    long acked = 0, late = 0, longest = 0, total = 0;
    REQUIRE(std::sscanf(
                output.c_str() + at,
                "[caller/0] after the cut: acknowledged %ld, late %ld, the longest late "
                "call took %ld ms, the counter holds %ld",
                &acked, &late, &longest, &total) == 4);
    MESSAGE("acknowledged ", acked, ", late ", late, " (the longest ", longest,
            " ms), the counter holds ", total);
    CHECK(late >= 1);
    CHECK(longest < 2000);  // its deadline is 500 ms
    CHECK(acked >= 20);
    CHECK(total >= acked);  // a late call may have been done, unheard
    CHECK(total <= acked + late);
  }

  TEST_CASE(
      "a node cut off the network for longer than its health_timeout: the launcher names "
      "it unreachable, ends it, and the program stops; nothing is left") {
    if (!test_hosts_with("nft")) return;
    scratch dir;
    // The supervisor's status page stays up after the end, until told.
    command launcher(scenario("partitioned", dir, {"--lp_status_linger_secs=60"}));
    REQUIRE(
        eventually([&] { return launcher.count("[caller/0] acknowledged ") >= 2; }, 90s));
    auto counter = where_serves(launcher.output(), "counter/0");
    INFO(launcher.output());
    REQUIRE(counter.port > 0);
    auto job = launcher.job();
    auto batch_host = shell("squeue --noheader --jobs=" + job + " --format=%B").second;
    batch_host = batch_host.substr(batch_host.find_first_of("0123456789"));
    batch_host.erase(batch_host.find_last_of("0123456789") + 1);
    std::optional<int> status;
    {
      network_cut cut(counter);
      auto cut_at = clock_type::now();
      // The job's log reaches the submitter a moment later: the supervisor
      // said it within the timeout and a half (3 s, probes every 750 ms).
      CHECK(eventually(
          [&] { return launcher.count("[lp] node counter/0 is unreachable: ") == 1; },
          20s));
      auto said_after = clock_type::now() - cut_at;
      MESSAGE("unreachable, said after ",
              std::chrono::duration_cast<std::chrono::milliseconds>(said_after).count(),
              " ms");
      CHECK(said_after >= 2s);
      CHECK(said_after < 12s);
      // The page shows it: --lp_status on the supervisor's host, whose
      // loopback the page listens on.
      REQUIRE(eventually(
          [&] { return launcher.count("[lp] node counter/0 failed: ") == 1; }, 30s));
      std::string table;
      CHECK(eventually(
          [&] {
            table = shell("ip netns exec lp-h" + batch_host + " " +
                          env_path("LP_SLURM_PROGRAM") +
                          " --scenario=partitioned --dir=" + dir.path +
                          " --lp_status=" + dir.run_dir())
                        .second;
            return table.find("  failed: unreachable: no answer to the launcher for ") !=
                   std::string::npos;
          },
          10s));
      INFO(table);
      std::istringstream rows(table);
      std::string row, first, state;
      while (std::getline(rows, row) && !row.starts_with("counter/0 ")) {
      }
      std::istringstream(row) >> first >> state;
      CHECK(state == "unreachable");
      shell("scancel --batch --signal=TERM " + job);  // ends the page's wait
      // The program stopped without the node: nothing waits for it, and its
      // process, which nothing can reach, is ended where it runs.
      status = launcher.exit_code(60s);
      REQUIRE(status.has_value());
      CHECK(eventually([&] { return command::job_gone(job); }, 60s));
      CHECK(eventually([&] { return node_processes(dir).empty(); }, 30s));
    }
    auto output = launcher.output();
    INFO(output);
    CHECK(*status == 1);
    CHECK(output.find(
              "[lp] node counter/0 is unreachable: no answer to the launcher for ") !=
          std::string::npos);
    CHECK(
        output.find(
            "[lp] node counter/0 failed: unreachable: no answer to the launcher for ") !=
        std::string::npos);
    CHECK(output.find(
              "past its group's health_timeout of 3000 ms (a network partition, or its "
              "host is down)") != std::string::npos);
  }
}

// Skipped (77, as meson counts it) without a Slurm to talk to, unless
// LP_REQUIRE_SLURM says this run is meant to test against one.
int main(int argc, char** argv) {
  if (!slurm_answers()) {
    if (std::getenv("LP_REQUIRE_SLURM")) {
      std::cerr << "no Slurm answers (sinfo failed), but LP_REQUIRE_SLURM is set; start "
                   "one with "
                   "tools/local-slurm.sh start"
                << std::endl;
      return 1;
    }
    std::cerr << "skipped: no Slurm answers (sinfo failed); start a local one with "
                 "tools/local-slurm.sh start"
              << std::endl;
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
