// End to end: programs launched as real processes (local_mp and
// test_multi_processing), on loopback, every wait bounded; and the clean
// stop of the same busy program under every local policy.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <launchpad/detail/host/rendezvous.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/log_tail.hpp>
#include <launchpad/detail/process/run_tool.hpp>
#include <launchpad/detail/process/tmux.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>

#include "command.hpp"
#include "processes/bulk_peers.hpp"
#include "processes/scenarios.hpp"
#include "scenario_launch.hpp"
#include "services.hpp"

namespace mp {
using clock = std::chrono::steady_clock;

using test_process::program_path;

using test_process::scratch;

// The pid a test process wrote into `name` in `dir`; 0 until it has.
pid_t pid_in(const scratch& dir, const std::string& name) {
  pid_t pid = 0;
  std::ifstream(dir.path + "/" + name) >> pid;
  return pid;
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  return stat >> pid_text >> name >> state && state != "Z";
}

using test_process::command;
using test_process::eventually;

// Removes the run directory a launcher announced (its first line), which a
// launcher that kept logs there leaves behind. A killed launcher's reaper
// clears it at the same moment (a file it removed first failed
// remove_all: 'No such file or directory [.../secret]'), so a file gone
// meanwhile is no error, and what is left goes on the next try.
void remove_run_dir(const std::string& output, const std::string& expected_prefix) {
  auto at = output.find("secret is in ");
  REQUIRE(at != std::string::npos);
  auto end = output.find("/secret", at);
  REQUIRE(end != std::string::npos);
  auto path = output.substr(at + 13, end - at - 13);
  REQUIRE(path.rfind(expected_prefix, 0) == 0);
  CHECK(eventually(
      [&] {
        std::error_code gone;
        std::filesystem::remove_all(path, gone);
        return !std::filesystem::exists(path);
      },
      std::chrono::seconds(5)));
}

using test_process::scenario_options;

// The children of a process (a launcher's: its node processes).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code gone;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task", gone)) {
    std::ifstream list(task.path().string() + "/children");
    for (pid_t child; list >> child;) out.push_back(child);
  }
  return out;
}

// Scenario saved_on_stop under local_mp with its checkpoints in `dir`, run
// by `wrapper` (timeout, say) if one is given.
std::vector<std::string> saved_on_stop(const scratch& dir,
                                       std::vector<std::string> wrapper = {}) {
  wrapper.insert(wrapper.end(), {program_path(), "--scenario=saved_on_stop",
                                 "--dir=" + dir.path, "--lp_checkpoint_dir=" + dir.path});
  return wrapper;
}

// One stop request, however many processes it reached and however often:
// exit 0, every node's on_stop ran, the tally saved its checkpoint on the
// way out (it saves no other), and no node was killed, failed or restarted.
void check_one_clean_stop(command& launcher, const scratch& dir,
                          const std::vector<pid_t>& nodes, std::optional<int> status) {
  INFO(launcher.output());
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(launcher.count("second signal") == 0);
  CHECK(launcher.count("failed") == 0);
  CHECK(launcher.count("restarting") == 0);
  CHECK(dir.has("tally/0.ckpt"));
  CHECK(dir.has("sleepers-0.stopped"));
  CHECK(dir.has("sleepers-1.stopped"));
  for (auto pid : nodes) CHECK_FALSE(alive(pid));
}

// A launcher on a terminal of its own (a pseudo-terminal): a Ctrl+C typed
// there is the kernel's SIGINT to the terminal's foreground process group,
// the launcher's, as at a user's terminal.
struct on_terminal {
  explicit on_terminal(std::vector<std::string> args) {
    terminal = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(terminal >= 0);
    REQUIRE(::grantpt(terminal) == 0);
    REQUIRE(::unlockpt(terminal) == 0);
    char name[128];
    REQUIRE(::ptsname_r(terminal, name, sizeof name) == 0);
    // Held here too, so that reading the terminal never meets its end
    // before the launcher has opened it, nor while a stray process holds it.
    held = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(held >= 0);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // The first terminal a session leader opens becomes its controlling one.
      ::setsid();
      int side = ::open(name, O_RDWR);
      if (side < 0) ::_exit(127);
      ::dup2(side, 0);
      ::dup2(side, 1);
      ::dup2(side, 2);
      if (side > 2) ::close(side);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    reader = std::thread([this] {
      char buffer[4096];
      while (!done) {
        pollfd ready{terminal, POLLIN, 0};
        if (::poll(&ready, 1, 100) <= 0) continue;
        auto n = ::read(terminal, buffer, sizeof buffer);
        if (n <= 0) return;
        std::lock_guard lock(mutex);
        text.append(buffer, static_cast<std::size_t>(n));
      }
    });
  }
  ~on_terminal() {
    if (!status) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    done = true;
    reader.join();
    ::close(held);
    ::close(terminal);
  }
  void type(char key) { REQUIRE(::write(terminal, &key, 1) == 1); }
  std::size_t count(const std::string& part) {
    std::lock_guard lock(mutex);
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
      ++n;
    return n;
  }
  std::string output() {
    std::lock_guard lock(mutex);
    return text;
  }
  std::optional<int> wait(std::chrono::milliseconds limit) {
    eventually(
        [&] {
          int raw = 0;
          if (::waitpid(pid, &raw, WNOHANG) == pid) status = raw;
          return status.has_value();
        },
        limit);
    return status;
  }

  pid_t pid = -1;
  int terminal = -1, held = -1;
  std::optional<int> status;
  std::atomic<bool> done{false};
  std::mutex mutex;
  std::string text;
  std::thread reader;
};

// 16 actors hammer one node (scenario `hammer`) until the launcher gets
// SIGTERM at a random moment: every round must end with exit 0, no node
// reported failed, and every actor's on_stop run.
void hammer_stopped_by_sigterm(const std::string& policy, int rounds, unsigned seed) {
  std::mt19937 random(seed);
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    scratch dir;
    command launcher({program_path(), "--scenario=hammer", "--dir=" + dir.path,
                      "--lp_launch=" + policy});
    REQUIRE(eventually([&] { return launcher.count("serving at") == 17; },
                       std::chrono::seconds(60)));
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
    ::kill(launcher.pid, SIGTERM);
    auto status = launcher.wait(std::chrono::seconds(60));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(launcher.count("failed") == 0);
    // The nodes heard of the stop; none asked for it.
    CHECK(launcher.count("asked the program to stop") == 0);
    for (int g = 0; g < 4; ++g)
      for (int i = 0; i < 4; ++i)
        CHECK(
            dir.has("actors" + std::to_string(g) + "-" + std::to_string(i) + ".stopped"));
  }
}

// The same under a test_multi_threading controller, stopped once the actors
// hammer, at a random moment: by the controller's stop(), or by lp::stop()
// from the test (outside any node) and then wait().
template <class Policy>
void hammer_stopped_in_threads(std::mt19937& random, bool by_controller) {
  scratch dir;
  lp::program p("scenario_hammer");
  scenarios::make(p, "hammer", dir.path);
  auto running = lp::launch<Policy>(p);
  auto counter = running.client(p.find<scenarios::Counter>("counter"));
  REQUIRE(eventually([&] { return counter.get() > 0; }, std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::milliseconds(random() % 100));
  if (by_controller) {
    CHECK(running.stop());
  } else {
    lp::stop();
    CHECK_NOTHROW(running.wait());
  }
  INFO(running.summary());
  CHECK(running.summary().empty());
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 4; ++i)
      CHECK(dir.has("actors" + std::to_string(g) + "-" + std::to_string(i) + ".stopped"));
}

// A launcher's rendezvous that hangs up without a word on its first
// `unanswered` connections, once it has read their request, and answers
// the others 200 {}. Loopback; its thread ends with it.
struct curt_launcher {
  explicit curt_launcher(int unanswered) : unanswered(unanswered) {
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof at;
    REQUIRE(::bind(listening, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(::listen(listening, 16) == 0);
    REQUIRE(::getsockname(listening, reinterpret_cast<sockaddr*>(&at), &length) == 0);
    url = "http://127.0.0.1:" + std::to_string(ntohs(at.sin_port));
    thread = std::thread([this] { serve(); });
  }
  ~curt_launcher() {
    ::shutdown(listening, SHUT_RDWR);
    thread.join();
    ::close(listening);
  }
  void serve() {
    for (;;) {
      int connection = ::accept4(listening, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) return;
      read_request(connection);
      if (++connections > unanswered) {
        std::string_view reply =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
        [[maybe_unused]] auto sent =
            ::send(connection, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
      ::close(connection);
    }
  }
  // Its head and body (by Content-Length), within 5 s.
  static void read_request(int connection) {
    std::string got;
    auto until = clock::now() + std::chrono::seconds(5);
    for (;;) {
      auto head_end = got.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        auto field = got.find("Content-Length: ");
        std::size_t length = field < head_end ? std::stoul(got.substr(field + 16)) : 0;
        if (got.size() >= head_end + 4 + length) return;
      }
      pollfd watched{connection, POLLIN, 0};
      if (clock::now() >= until || ::poll(&watched, 1, 100) < 0) return;
      char buffer[4096];
      ssize_t n = ::recv(connection, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n == 0) return;
      if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
    }
  }
  const int unanswered;
  int listening = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string url;
  std::atomic<int> connections{0};
  std::thread thread;
};

// The names in a directory.
std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  std::error_code gone;
  for (const auto& entry : std::filesystem::directory_iterator(dir, gone))
    names.insert(entry.path().filename().string());
  return names;
}

// The memfd segments this process holds that are not its pool's own
// (lp::detail::segment_pool): by identity, those it has open and those it
// has mapped.
struct foreign_segments {
  std::set<std::pair<dev_t, ino_t>> descriptors, mappings;
  // Whether it holds none but those of `earlier`.
  bool within(const foreign_segments& earlier) const {
    return std::includes(earlier.descriptors.begin(), earlier.descriptors.end(),
                         descriptors.begin(), descriptors.end()) &&
           std::includes(earlier.mappings.begin(), earlier.mappings.end(),
                         mappings.begin(), mappings.end());
  }
};
foreign_segments foreign_segments_now() {
  auto& pool = lp::detail::segment_pool::of_process();
  foreign_segments found;
  std::error_code gone;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", gone)) {
    std::error_code unreadable;
    auto target = std::filesystem::read_symlink(entry.path(), unreadable).string();
    struct stat about {};
    if (unreadable || !target.starts_with("/memfd:") ||
        ::stat(entry.path().c_str(), &about) != 0)
      continue;
    if (!pool.own({about.st_dev, about.st_ino}))
      found.descriptors.insert({about.st_dev, about.st_ino});
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, modes, offset, device;
    ino_t inode = 0;
    fields >> range >> modes >> offset >> device >> inode;
    auto colon = device.find(':');
    auto major = std::stoul(device.substr(0, colon), nullptr, 16);
    auto minor = std::stoul(device.substr(colon + 1), nullptr, 16);
    if (!pool.own({makedev(major, minor), inode}))
      found.mappings.insert({makedev(major, minor), inode});
  }
  return found;
}
}  // namespace mp

TEST_SUITE("processes") {
  TEST_CASE(
      "past --lp_shared_memory_mb a call's arrays go through the socket, counted; 0 "
      "lends none") {
    auto& pool = lp::detail::segment_pool::of_process();
    lp::tensor<float> values({std::size_t{1} << 20}, std::vector<float>(1 << 20, 0.5f));
    for (std::size_t cap : {std::size_t{1} << 20, std::size_t{0}}) {
      CAPTURE(cap);
      mp::scratch sockets, markers;
      bulk_peers::hosted node(sockets.path, markers.path, cap);
      auto holder = bulk_peers::client_of(node.where);
      auto before = pool.counts();
      // 4 MB each way, over a cap of 1 MiB, or none: through the socket, and
      // from the second call on, past a cap, counted.
      for (int i = 0; i < 3; ++i) {
        auto back = holder.hold(values, 0);
        CHECK(back == values);
        CHECK_FALSE(back.in_shared_memory());
      }
      auto after = pool.counts();
      CHECK(after.lent == before.lent);
      CHECK(after.bytes <= cap);
      if (cap > 0)
        CHECK(after.fallbacks >= before.fallbacks + 2);
      else
        CHECK(after.fallbacks == before.fallbacks);  // none: nothing to count
    }
    // The same process, with the default cap: through segments again.
    mp::scratch sockets, markers;
    bulk_peers::hosted node(sockets.path, markers.path);
    auto holder = bulk_peers::client_of(node.where);
    holder.hold(values, 0);
    CHECK(holder.hold(values, 0).in_shared_memory());
  }

  TEST_CASE(
      "kill -9 of either side mid-transfer through shared memory: the survivor keeps "
      "nothing of the dead one's and works on") {
    auto shm_before = mp::names_in("/dev/shm");
    auto values = bulk_peers::payload();
    // What earlier tests' peers left here (a caller thread keeps its last
    // reply's connection, and the segments it brought, until its next
    // call) is theirs; nothing of this test's dead peers may join it.
    auto earlier = mp::foreign_segments_now();
    auto no_foreign_segments = [&] {
      return mp::eventually([&] { return mp::foreign_segments_now().within(earlier); },
                            std::chrono::seconds(10));
    };
    {
      // The node is this process; each caller, killed mid-call, another.
      mp::scratch sockets, held;
      bulk_peers::hosted node(sockets.path, held.path);
      for (int round = 0; round < 3; ++round) {
        CAPTURE(round);
        mp::scratch markers;
        bulk_peers::write_address(markers.path + "/address", node.where);
        // Round 0: killed while the node holds its array in place; then at
        // two points of a run of echoes, all through segments but the first.
        mp::command caller({mp::program_path(), "--bulk_call",
                            "--markers=" + markers.path,
                            "--hold_ms=" + std::string(round == 0 ? "2000" : "0")});
        if (round == 0) {
          REQUIRE(mp::eventually([&] { return held.has("holding"); },
                                 std::chrono::seconds(60)));
        } else {
          REQUIRE(mp::eventually([&] { return markers.has("called.1"); },
                                 std::chrono::seconds(60)));
          std::this_thread::sleep_for(std::chrono::milliseconds(round * 20));
        }
        ::kill(caller.pid, SIGKILL);
        REQUIRE(caller.wait(std::chrono::seconds(10)));
      }
      CHECK(no_foreign_segments());
      // It serves on, through segments from the second call.
      auto holder = bulk_peers::client_of(node.where);
      for (int i = 0; i < 2; ++i) CHECK(holder.hold(values, 0).size() == values.size());
      CHECK(mp::names_in(sockets.path) == std::set<std::string>{"holder.sock"});
    }
    {
      // The caller is this process; each node, killed mid-call, another.
      mp::scratch sockets;
      for (int round = 0; round < 3; ++round) {
        CAPTURE(round);
        mp::scratch markers;
        mp::command node({mp::program_path(), "--bulk_serve=" + sockets.path,
                          "--markers=" + markers.path});
        REQUIRE(mp::eventually([&] { return markers.has("address"); },
                               std::chrono::seconds(60)));
        auto holder =
            bulk_peers::client_of(bulk_peers::read_address(markers.path + "/address"));
        // The first call learns that the node reads segments. A node that
        // died before serves again from its socket's place.
        REQUIRE(holder.hold(values, 0).size() == values.size());
        std::atomic<bool> ended{false};
        std::string failure;
        std::thread calling([&] {
          try {
            for (int i = 0; i < 200; ++i) holder.hold(values, round == 0 ? 3000 : 0);
          } catch (const lp::transport_error& e) {
            failure = e.what();
          }
          ended = true;
        });
        // Round 0: killed while it holds this caller's array in place; then
        // at two points of a run of echoes.
        if (round == 0)
          CHECK(mp::eventually([&] { return markers.has("holding"); },
                               std::chrono::seconds(60)));
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(30 * round));
        ::kill(node.pid, SIGKILL);
        bool no_hang =
            mp::eventually([&] { return ended.load(); }, std::chrono::seconds(30));
        CHECK(no_hang);
        calling.join();
        INFO(failure);
        CHECK(failure.find("holder.hold") != std::string::npos);
        REQUIRE(node.wait(std::chrono::seconds(10)));
        // Its next call fails at once, saying so. (Until then this thread
        // keeps the connection of its last reply, whose segments that
        // reply's values may read in place: the dead node's, here.)
        auto started = mp::clock::now();
        CHECK_THROWS_WITH_AS(holder.hold(values, 0), doctest::Contains("holder.hold"),
                             lp::transport_error);
        CHECK(mp::clock::now() - started < std::chrono::seconds(10));
        CHECK(no_foreign_segments());
      }
      // A node killed leaves its socket, which the next one in its place
      // takes over (and a launch's end removes with the run directory).
      CHECK(mp::names_in(sockets.path) == std::set<std::string>{"holder.sock"});
    }
    CHECK(mp::names_in("/dev/shm") == shm_before);
  }

  TEST_CASE(
      "a node asks the launcher's rendezvous again when it hung up unanswered, never "
      "when it is gone") {
    lp::detail::address where{"127.0.0.1", 5};
    {
      // A busy launcher closed a node's silent new connection: the node
      // could not publish, and failed its launch.
      mp::curt_launcher launcher(1);
      lp::detail::rendezvous_directory rendezvous(launcher.url, "");
      CHECK_NOTHROW(rendezvous.publish("node", where));
      CHECK(launcher.connections == 2);
    }
    {
      mp::curt_launcher launcher(100);
      lp::detail::rendezvous_directory rendezvous(launcher.url, "");
      CHECK_THROWS_WITH_AS(rendezvous.publish("node", where),
                           doctest::Contains("closed the connection before responding; "
                                             "asked 3 times"),
                           lp::launch_error);
      CHECK(launcher.connections == 3);
    }
    std::string gone_url;
    {
      mp::curt_launcher launcher(0);
      gone_url = launcher.url;
    }
    lp::detail::rendezvous_directory rendezvous(gone_url, "");
    auto started = mp::clock::now();
    CHECK_THROWS_WITH_AS(rendezvous.publish("node", where),
                         doctest::Contains("cannot connect"), lp::launch_error);
    CHECK(mp::clock::now() - started < std::chrono::seconds(5));
  }

  TEST_CASE("a launched program: its groups finish, its nodes answer, it stops cleanly") {
    mp::scratch dir;
    lp::program p("scenario_counter");
    scenarios::make(p, "counter", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, mp::scenario_options("counter", dir));
    CHECK(running.pids().size() == 4);
    CHECK(running.wait({"producers"}));
    CHECK(running.client(p.find<scenarios::Counter>("counter")).get() == 300);
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }

  TEST_CASE(
      "each node process also serves on a unix socket in the run directory, which "
      "curl reaches; --lp_same_host=off: none") {
    for (bool off : {false, true}) {
      CAPTURE(off);
      mp::scratch dir;
      lp::program p("scenario_counter");
      scenarios::make(p, "counter", dir.path);
      auto options = mp::scenario_options("counter", dir);
      if (off) options.arguments.push_back("--lp_same_host=off");
      auto running = lp::launch<lp::test_multi_processing>(p, options);
      CHECK(running.wait({"producers"}));
      auto counter = running.client(p.find<scenarios::Counter>("counter"));
      CHECK(counter.get() == 300);
      auto sockets = running.run_dir() + "/sockets";
      auto path = sockets + "/counter.sock";
      if (off) {
        CHECK_FALSE(std::filesystem::exists(sockets));
      } else {
        struct stat about {};
        REQUIRE(::stat(sockets.c_str(), &about) == 0);
        CHECK((about.st_mode & 0777) == 0700);
        REQUIRE(::stat(path.c_str(), &about) == 0);
        CHECK(S_ISSOCK(about.st_mode));
        CHECK((about.st_mode & 0777) == 0600);
        if (std::system("curl --version > /dev/null 2>&1") == 0) {
          mp::command curl({"/usr/bin/curl", "-s", "--unix-socket", path, "-H",
                            "Authorization: Bearer " + running.secret(), "-d", "[0]",
                            "http://localhost/lp/v1/call/add"});
          REQUIRE(curl.exit_code(std::chrono::seconds(30)) == 0);
          CHECK(curl.output() == R"({"result":300})");
        } else {
          MESSAGE("curl --unix-socket skipped: no curl (apt-get install curl)");
        }
      }
      CHECK(running.stop());
      CHECK_FALSE(std::filesystem::exists(path));  // each node took its socket away
    }
  }

  TEST_CASE(
      "a --lp_ flag the node processes would refuse fails at the launch, not in them") {
    mp::scratch dir;
    lp::program p("scenario_counter");
    scenarios::make(p, "counter", dir.path);
    auto options = mp::scenario_options("counter", dir);
    options.arguments.push_back("--lp_lunch=local_mp");
    CHECK_THROWS_WITH_AS(lp::launch<lp::test_multi_processing>(p, options),
                         doctest::Contains("unknown flag --lp_lunch"), lp::usage_error);
    // A launcher's own flag is one they read.
    options.arguments.back() = "--lp_slurm_partition=debug";
    auto running = lp::launch<lp::test_multi_processing>(p, options);
    CHECK(running.wait({"producers"}));
    CHECK(running.stop());
  }

  TEST_CASE(
      "consumer_producers as local_mp: exit 0, every node's output behind its label") {
    const char* example = std::getenv("LP_EXAMPLE_CONSUMER_PRODUCERS");
    REQUIRE(example);
    mp::command launcher({example, "--lp_launch=local_mp"});
    auto status = launcher.wait(std::chrono::seconds(60));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(launcher.count("[consumer] sum of squares below 1000: 332833500") == 1);
    for (int i = 0; i < 4; ++i) {
      auto label = "producers/" + std::to_string(i);
      CHECK(launcher.count("[" + label + "] [lp] " + label +
                           " serving at http://127.0.0.1:") == 1);
    }
  }

  TEST_CASE("actor_learner as local_mp: every node a process, and the policy learned") {
    const char* example = std::getenv("LP_EXAMPLE_ACTOR_LEARNER");
    REQUIRE(example);
    mp::scratch dir;
    mp::command launcher(
        {example, "--lp_launch=local_mp", "--lp_checkpoint_dir=" + dir.path});
    // A few seconds, but learning is slow under a sanitizer on a busy machine.
    auto status = launcher.wait(std::chrono::seconds(180));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);  // the example fails unless it beat a random policy
    CHECK(launcher.count(
              "[learner] average return: learned policy 1.00, random policy ") == 1);
    // Saved when they stopped: a later launch could resume from them.
    CHECK(dir.has("replay.ckpt"));
    CHECK(dir.has("learner.ckpt"));
    for (std::string label : {"replay", "learner", "actors/0", "actors/1", "actors/2"})
      CHECK(launcher.count("[" + label + "] [lp] " + label + " serving at") == 1);

    // A later launch resumes from them: the learner has done its updates
    // already, so it reports the policy it restored, and that policy wins.
    mp::command resumed({example, "--lp_launch=local_mp", "--lp_resume=" + dir.path,
                         "--lp_checkpoint_dir=" + dir.path + "/resumed"});
    auto resumed_status = resumed.wait(std::chrono::seconds(180));
    INFO(resumed.output());
    REQUIRE(resumed_status);
    CHECK(WIFEXITED(*resumed_status));
    CHECK(WEXITSTATUS(*resumed_status) == 0);
    for (std::string label : {"replay", "learner"})
      CHECK(resumed.count("[" + label + "] [lp] " + label + " restored from " + dir.path +
                          "/" + label + ".ckpt") == 1);
    CHECK(resumed.count(
              "[learner] average return: learned policy 1.00, random policy ") == 1);
  }

  TEST_CASE(
      "kill -9 of a node: the launch fails at once, naming it, and nothing remains") {
    mp::scratch dir;
    lp::program p("scenario_sleepers");
    scenarios::make(p, "sleepers", dir.path);
    // The others stop in order within their termination notice; a launch
    // that learned of the kill only by waiting them out would take it.
    auto options = mp::scenario_options("sleepers", dir);
    options.termination_notice = std::chrono::seconds(30);
    auto running = lp::launch<lp::test_multi_processing>(p, options);
    auto victim = running.client(p.find<scenarios::Sleeper>("sleepers/1")).ping();
    // The others serve too (their on_stop is registered) before the kill.
    for (const char* other : {"sleepers/0", "sleepers/2"})
      CHECK(running.client(p.find<scenarios::Sleeper>(other)).ping() > 0);
    auto pids = running.pids();
    REQUIRE(pids.size() == 3);
    auto me = running.client(p.find<scenarios::Sleeper>("sleepers/1")).whoami();
    CHECK(me == std::vector<std::string>{"sleepers/1", "test_mp", running.run_dir(),
                                         std::to_string(victim)});
    auto killed_at = mp::clock::now();
    ::kill(victim, SIGKILL);
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    // Half the notice: the kill was seen when it came (the summary names the
    // signal: the launcher reaped the process, no probe found it silent).
    auto took = mp::clock::now() - killed_at;
    MESSAGE("the launch ended " << std::chrono::duration<double>(took).count()
                                << " s after the kill");
    CHECK(took < std::chrono::seconds(15));
    CHECK(running.summary().find("node sleepers/1 failed: killed by signal SIGKILL") !=
          std::string::npos);
    for (auto pid : pids) CHECK_FALSE(mp::alive(pid));
    CHECK(dir.has("sleepers-0.stopped"));  // the others stopped in order
    CHECK(dir.has("sleepers-2.stopped"));
    auto sleeper = running.client(p.find<scenarios::Sleeper>("sleepers/0"));
    CHECK_THROWS_WITH_AS(sleeper.ping(), doctest::Contains("sleepers/0"),
                         lp::transport_error);
  }

  TEST_CASE("SIGKILL of the launcher: every node process dies with it") {
    mp::scratch dir;
    mp::command launcher(
        {mp::program_path(), "--scenario=sleepers", "--dir=" + dir.path});
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                           std::chrono::seconds(30)));
    auto nodes = launcher.children();
    REQUIRE(nodes.size() == 3);
    ::kill(launcher.pid, SIGKILL);
    CHECK(mp::eventually(
        [&] {
          for (auto pid : nodes)
            if (mp::alive(pid)) return false;
          return true;
        },
        std::chrono::seconds(2)));
    // A launcher killed so cannot tidy up its run directory; the test does.
    mp::remove_run_dir(launcher.output(), "/tmp/lp-scenario_sleepers-");
  }

  TEST_CASE(
      "SIGKILL of the launcher: what the nodes started dies too, to the "
      "great-grandchild") {
    mp::scratch dir;
    mp::command launcher({mp::program_path(), "--scenario=spawner", "--dir=" + dir.path});
    REQUIRE(mp::eventually([&] { return mp::pid_in(dir, "great-grandchild.pid") > 0; },
                           std::chrono::seconds(30)));
    std::vector<pid_t> descendants{mp::pid_in(dir, "grandchild.pid"),
                                   mp::pid_in(dir, "great-grandchild.pid")};
    for (auto pid : descendants) REQUIRE(mp::alive(pid));
    ::kill(launcher.pid, SIGKILL);
    CHECK(mp::eventually(
        [&] {
          for (auto pid : descendants)
            if (mp::alive(pid)) return false;
          return true;
        },
        std::chrono::seconds(5)));
    mp::remove_run_dir(launcher.output(), "/tmp/lp-scenario_spawner-");
  }

  TEST_CASE(
      "a node that ends leaves nothing it started behind, while the program runs on") {
    mp::scratch dir;
    lp::program p("scenario_spawner");
    scenarios::make(p, "spawner", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, mp::scenario_options("spawner", dir));
    REQUIRE(mp::eventually([&] { return mp::pid_in(dir, "great-grandchild.pid") > 0; },
                           std::chrono::seconds(30)));
    std::vector<pid_t> descendants{mp::pid_in(dir, "grandchild.pid"),
                                   mp::pid_in(dir, "great-grandchild.pid")};
    CHECK(running.stop());
    CHECK(mp::eventually(
        [&] {  // SIGKILL sent to the group: gone a moment later
          for (auto pid : descendants)
            if (mp::alive(pid)) return false;
          return true;
        },
        std::chrono::seconds(2)));
  }

  TEST_CASE(
      "SIGTERM at a random moment to 16 actors hammering one node: exit 0, 20 times") {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    constexpr int rounds = 5;  // five processes under a sanitizer, on 2 cores: slow
#else
    constexpr int rounds = 20;
#endif
    mp::hammer_stopped_by_sigterm("local_mp", rounds, 20261201);
  }

  TEST_CASE(
      "local_mt: SIGTERM at a random moment to 16 actors hammering one node: exit 0, 20 "
      "times") {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    constexpr int rounds = 5;  // 17 threads under a sanitizer, on 2 cores: slow
#else
    constexpr int rounds = 20;
#endif
    mp::hammer_stopped_by_sigterm("local_mt", rounds, 20261202);
  }

  TEST_CASE(
      "test_mt: stop() or lp::stop() while 16 actors hammer one node: clean, on_stop "
      "ran") {
    std::mt19937 random(20261203);
    for (int round = 0; round < 8; ++round) {
      CAPTURE(round);
      // Over HTTP and with direct calls; by the controller and by lp::stop().
      bool by_controller = round % 2 == 0;
      if (round < 4)
        mp::hammer_stopped_in_threads<lp::test_multi_threading>(random, by_controller);
      else
        mp::hammer_stopped_in_threads<lp::direct_calls<lp::test_multi_threading>>(
            random, by_controller);
    }
  }

  TEST_CASE("an actor that throws its own error during the stop still makes the exit 1") {
    for (std::string policy : {"local_mp", "local_mt"}) {
      CAPTURE(policy);
      mp::scratch dir;
      mp::command launcher({mp::program_path(), "--scenario=hammer_fails",
                            "--dir=" + dir.path, "--lp_launch=" + policy});
      REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 17; },
                             std::chrono::seconds(60)));
      ::kill(launcher.pid, SIGTERM);
      auto status = launcher.wait(std::chrono::seconds(60));
      INFO(launcher.output());
      REQUIRE(status);
      CHECK(WEXITSTATUS(*status) == 1);
      CHECK(launcher.count("an error of the actor's own, while stopping") >= 1);
      // The summary quotes the failed node's last lines, under both policies.
      auto output = launcher.output();
      auto quoted = output.find("[lp]   its last lines:\n");
      CHECK(quoted != std::string::npos);
      CHECK(output.find("[lp]   | the actor gives up\n", quoted) != std::string::npos);
    }
    // test_mt: stop() says a node failed, and summary() names the error.
    mp::scratch dir;
    lp::program p("scenario_hammer_fails");
    scenarios::make(p, "hammer_fails", dir.path);
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(p.find<scenarios::Counter>("counter"));
    REQUIRE(mp::eventually([&] { return counter.get() > 0; }, std::chrono::seconds(30)));
    CHECK_FALSE(running.stop());
    INFO(running.summary());
    CHECK(running.summary().find(
              "node actors0/0 failed: an error of the actor's own, while "
              "stopping") != std::string::npos);
  }

  TEST_CASE("SIGINT to the launcher: every node stops in order, on_stop runs, exit 0") {
    mp::scratch dir;
    mp::command launcher(
        {mp::program_path(), "--scenario=sleepers", "--dir=" + dir.path});
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                           std::chrono::seconds(30)));
    ::kill(launcher.pid, SIGINT);
    auto status = launcher.wait(std::chrono::seconds(30));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    for (int i = 0; i < 3; ++i)
      CHECK(dir.has("sleepers-" + std::to_string(i) + ".stopped"));
  }

  TEST_CASE(
      "a stop signal that reaches a node process before its execve is the node's, not "
      "the launcher's") {
    std::atomic<int> heard{0};
    lp::detail::stop_on_signals launcher_handler([&](const auto&) { ++heard; });
    pid_t child = -1;
    {
      lp::detail::fork_guard guard;
      child = ::fork();
      if (child == 0) {
        ::raise(SIGTERM);  // as the launcher's stop would, between fork and execve
        lp::detail::fork_guard::child_ready_for_signals();
        ::_exit(0);
      }
    }
    REQUIRE(child > 0);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(heard == 0);
  }

  TEST_CASE(
      "two launches in one process, one after the other or one from a node: each its own "
      "stop and signals") {
    for (std::string scenario : {"sequential_launches", "nested_launch"}) {
      CAPTURE(scenario);
      mp::scratch dir;
      mp::command launcher(
          {mp::program_path(), "--scenario=" + scenario, "--dir=" + dir.path});
      // The inner launch ended by its own lp::stop(); the outer one runs on.
      REQUIRE(mp::eventually([&] { return dir.has("inner.ended"); },
                             std::chrono::seconds(30)));
      CHECK(dir.read("inner.ended") == "0");
      CHECK(dir.has("inner-0.stopped"));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      CHECK_FALSE(launcher.wait(std::chrono::milliseconds(0)));
      CHECK_FALSE(dir.has("outer-0.stopped"));
      // Its signals are still its own.
      ::kill(launcher.pid, SIGTERM);
      auto status = launcher.wait(std::chrono::seconds(30));
      INFO(launcher.output());
      REQUIRE(status);
      CHECK(WIFEXITED(*status));
      CHECK(WEXITSTATUS(*status) == 0);
      CHECK(dir.has("outer-0.stopped"));
      // One labelling of std::cout and std::cerr in the process, whichever
      // launch's node writes.
      CHECK(launcher.count("[nester] [nester]") == 0);
    }
  }

  TEST_CASE("a node process keeps large blocks in its heap, unless --lp_system_malloc") {
    for (bool system : {false, true}) {
      CAPTURE(system);
      mp::scratch dir;
      std::vector<std::string> args{mp::program_path(), "--scenario=malloc_probe",
                                    "--dir=" + dir.path};
      if (system) args.push_back("--lp_system_malloc");
      mp::command launcher(args);
      auto status = launcher.wait(std::chrono::seconds(30));
      INFO(launcher.output());
      REQUIRE(status);
      CHECK(WEXITSTATUS(*status) == 0);
      if (dir.read("mmapped") == "sanitizer") {
        MESSAGE("skipped: a sanitizer's allocator answers malloc");
        return;
      }
      CHECK(dir.read("mmapped") == (system ? "yes" : "no"));
    }
  }

  TEST_CASE("--lp_terminal=files: one log file per node, named by its label") {
    mp::scratch dir, logs;
    mp::command launcher({mp::program_path(), "--scenario=stopper", "--dir=" + dir.path,
                          "--lp_terminal=files", "--lp_log_dir=" + logs.path});
    auto status = launcher.wait(std::chrono::seconds(30));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(launcher.count("node logs in " + logs.path) == 1);
    CHECK(launcher.count("serving at") == 0);  // not on the terminal
    std::ifstream log(logs.path + "/sleepers_0.log");
    std::string text((std::istreambuf_iterator<char>(log)),
                     std::istreambuf_iterator<char>());
    CHECK(text.find("[lp] sleepers/0 serving at http://127.0.0.1:") != std::string::npos);
    CHECK(logs.has("stopper.log"));
  }

  TEST_CASE("--lp_terminal=tmux: a tmux window per node, gone when the program stops") {
    auto tmux = [](std::vector<std::string> command) {
      command.insert(command.begin(), "tmux");
      return lp::detail::run_tool(command, lp::detail::tmux_session::tool_limit).status;
    };
    if (tmux({"-V"}) != 0) {
      MESSAGE("tmux is not installed; skipped");
      return;
    }
    mp::scratch dir;
    // Its own tmux server, under the scratch directory (the launcher's
    // tmux inherits it): not /tmp/tmux-<uid>, which would stay.
    ::setenv("TMUX_TMPDIR", dir.path.c_str(), 1);
    struct unset {
      ~unset() { ::unsetenv("TMUX_TMPDIR"); }
    } after;
    mp::command launcher({mp::program_path(), "--scenario=sleepers", "--dir=" + dir.path,
                          "--lp_terminal=tmux"});
    // The whole line: std::cerr writes its pieces one at a time.
    auto said = [&] {
      auto output = launcher.output();
      auto at = output.find("tmux attach -t ");
      return at != std::string::npos && output.find('\n', at) != std::string::npos;
    };
    REQUIRE(mp::eventually(said, std::chrono::seconds(30)));
    auto output = launcher.output();
    auto at = output.find("tmux attach -t ") + 15;
    auto session = output.substr(at, output.find('\n', at) - at);
    // "=": this session exactly; a bare name also matches longer ones by prefix.
    // In busy CI runs tmux has said no such session at the first ask, and
    // once failed for all of 5 s, then yes to every window right after: a
    // single ask may take tmux's whole tool_limit (10 s). Asked again for up
    // to 30 s; what it answered, and when, goes into the report.
    std::string answers;
    bool there = mp::eventually(
        [&] {
          auto asked = std::chrono::steady_clock::now();
          int status = tmux({"has-session", "-t", "=" + session});
          answers += " " + std::to_string(status) + " after " +
                     std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - asked)
                                        .count()) +
                     " ms;";
          return status == 0;
        },
        std::chrono::seconds(30));
    if (!there) MESSAGE("tmux has-session -t =" << session << " answered:" << answers);
    CHECK(there);
    for (auto window : {"sleepers/0", "sleepers/1", "sleepers/2"})
      CHECK(tmux({"select-window", "-t", "=" + session + ":" + window}) == 0);
    ::kill(launcher.pid, SIGINT);
    auto status = launcher.wait(std::chrono::seconds(30));
    REQUIRE(status);
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(tmux({"has-session", "-t", "=" + session}) != 0);
    mp::remove_run_dir(output, "/tmp/lp-scenario_sleepers-");
  }

  TEST_CASE("a log's last lines, read from its end, are those of the whole log") {
    constexpr auto kept = lp::detail::labelled_lines::kept;
    mp::scratch dir;
    auto path = dir.path + "/node.log";
    auto tail_of = [&](const std::string& text) {
      std::ofstream(path, std::ios::binary) << text;
      return lp::detail::log_tail(path);
    };
    std::string many, long_lines;
    for (std::size_t i = 0; i < 5 * kept; ++i) many += "line " + std::to_string(i) + "\n";
    for (std::size_t i = 0; i < kept + 5; ++i)
      long_lines += std::string(1000, 'a' + i % 26) + "\n";
    auto last = [](const std::string& text) {
      std::vector<std::string> lines;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      if (lines.size() > kept) lines.erase(lines.begin(), lines.end() - kept);
      return lines;
    };
    for (const auto& text :
         {std::string(), std::string("\n"), std::string("one"), std::string("one\ntwo\n"),
          many, many + "unfinished", long_lines, std::string(20000, 'x') + "\nlast\n"}) {
      CAPTURE(text.size());
      CHECK(tail_of(text) == last(text));
    }
    CHECK(lp::detail::log_tail(dir.path + "/none.log").empty());
  }

  TEST_CASE(
      "a tool is run to its end within its limit, or killed with its group, named") {
    using lp::detail::run_tool;
    using namespace std::chrono_literals;
    auto said = run_tool({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
    CHECK(said.status == 3);
    CHECK(said.text == "out\nerr\n");
    CHECK(run_tool({"lp-no-such-tool"}, 10s).text == "lp-no-such-tool is not on PATH");
    // Ended, though what it started still holds its output open.
    auto begun = std::chrono::steady_clock::now();
    CHECK(run_tool({"sh", "-c", "sleep 3 & echo left"}, 10s).text == "left\n");
    CHECK(std::chrono::steady_clock::now() - begun < 2s);

    mp::scratch dir;
    begun = std::chrono::steady_clock::now();
    std::string message;
    try {
      run_tool({"sh", "-c", "sleep 30 & echo $! > " + dir.path + "/child; wait"}, 1s);
    } catch (const lp::launch_error& e) {
      message = e.what();
    }
    CHECK(message ==
          "[lp.launch_error] sh did not answer within 1 s, and was killed; run `sh -c "
          "'sleep 30 & echo $! > " +
              dir.path +
              "/child; wait'` by hand to see what it "
              "waits for");
    CHECK(std::chrono::steady_clock::now() - begun < 5s);
    // What it started went with it: gone, or a zombie for init to reap.
    auto child = dir.read("child");
    REQUIRE_FALSE(child.empty());
    CHECK(mp::eventually(
        [&] {
          std::string stat;
          std::getline(std::ifstream("/proc/" + child + "/stat"), stat);
          auto state = stat.find(") ");
          return stat.empty() || stat.substr(state + 2, 1) == "Z";
        },
        5s));
  }

  TEST_CASE("a node that does not stop in time is killed after the termination notice") {
    mp::scratch dir;
    mp::command launcher({mp::program_path(), "--scenario=stubborn", "--dir=" + dir.path,
                          "--lp_termination_notice_secs=1"});
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 1; },
                           std::chrono::seconds(30)));
    auto nodes = launcher.children();
    ::kill(launcher.pid, SIGTERM);
    auto status = launcher.wait(std::chrono::seconds(10));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(WEXITSTATUS(*status) == 1);
    CHECK(
        launcher.count(
            "node stubborn failed: did not stop within the termination notice of 1 s") ==
        1);
    for (auto pid : nodes) CHECK_FALSE(mp::alive(pid));
  }

  TEST_CASE(
      "a second request kills every node at once: another sender's, or the same one's "
      "later") {
    for (bool same_sender : {false, true}) {
      CAPTURE(same_sender);
      mp::scratch dir;
      // A notice far longer than the bound below: only the second request's
      // kill can end the launch within it.
      mp::command launcher({mp::program_path(), "--scenario=stubborn",
                            "--dir=" + dir.path, "--lp_termination_notice_secs=60"});
      REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 1; },
                             std::chrono::seconds(30)));
      auto nodes = launcher.children();
      ::kill(launcher.pid, SIGINT);
      REQUIRE(mp::eventually([&] { return launcher.count("stopping every node") == 1; },
                             std::chrono::seconds(10)));
      if (same_sender) {
        // Within the window it would only repeat the first.
        std::this_thread::sleep_for(lp::detail::stop_on_signals::repeat_window +
                                    std::chrono::milliseconds(200));
      }
      auto second_at = mp::clock::now();
      if (same_sender)
        ::kill(launcher.pid, SIGINT);
      else {  // at once, from a process of its own (no kill(1): a minimal root has none)
        pid_t sender = ::fork();
        if (sender == 0) {
          ::kill(launcher.pid, SIGINT);
          ::_exit(0);
        }
        REQUIRE(sender > 0);
        int raw = 0;
        REQUIRE(::waitpid(sender, &raw, 0) == sender);
      }
      auto status = launcher.wait(std::chrono::seconds(45));
      INFO(launcher.output());
      REQUIRE(status);
      CHECK(mp::clock::now() - second_at <
            std::chrono::seconds(30));  // not the 60 s notice
      CHECK(WEXITSTATUS(*status) == 1);
      CHECK(launcher.count("killing every node") == 1);
      for (auto pid : nodes) CHECK_FALSE(mp::alive(pid));
    }
  }

  TEST_CASE(
      "a second Ctrl+C at a terminal kills every node at once, however soon it comes") {
    mp::scratch dir;
    mp::on_terminal launcher({mp::program_path(), "--scenario=stubborn",
                              "--dir=" + dir.path, "--lp_termination_notice_secs=60"});
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 1; },
                           std::chrono::seconds(30)));
    auto nodes = mp::children_of(launcher.pid);
    launcher.type('\x03');
    REQUIRE(
        mp::eventually([&] { return launcher.count("SIGINT: stopping every node") == 1; },
                       std::chrono::seconds(10)));
    auto second_at = mp::clock::now();
    launcher.type('\x03');
    auto status = launcher.wait(std::chrono::seconds(45));
    INFO(launcher.output());
    REQUIRE(status);
    CHECK(mp::clock::now() - second_at <
          std::chrono::seconds(30));  // not the 60 s notice
    CHECK(WEXITSTATUS(*status) == 1);
    // What it wrote last may still be on its way through the terminal.
    CHECK(mp::eventually([&] { return launcher.count("killing every node") == 1; },
                         std::chrono::seconds(2)));
    for (auto pid : nodes) CHECK_FALSE(mp::alive(pid));
  }

  TEST_CASE(
      "under timeout, which signals the program and then its group: one clean stop") {
    for (std::string policy : {"local_mp", "local_mt"}) {
      CAPTURE(policy);
      mp::scratch dir;
      // --preserve-status: timeout exits as the program did, not with 124.
      // Its time is up when the nodes serve: timeout's timer is SIGALRM,
      // which the test sends then instead of waiting for a limit long enough
      // for the slowest start (8 s, 30 s under a sanitizer, before). The
      // limit is a bound, should the test fail to send it.
      auto args = mp::saved_on_stop(
          dir, {"/usr/bin/timeout", "--preserve-status", "--signal=TERM", "300"});
      args.push_back("--lp_launch=" + policy);
      mp::command launcher(args);
      // Every node serves before the time is up, or this tests a stop during the start.
      REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                             std::chrono::seconds(60)));
      REQUIRE(launcher.count("SIGTERM: stopping") == 0);
      std::vector<pid_t> nodes;
      for (auto program : launcher.children())
        for (auto node : mp::children_of(program)) nodes.push_back(node);
      CHECK(nodes.size() == (policy == "local_mp" ? 3 : 0));
      REQUIRE(::kill(launcher.pid, SIGALRM) == 0);
      auto status = launcher.wait(std::chrono::seconds(60));
      mp::check_one_clean_stop(launcher, dir, nodes, status);
      CHECK(launcher.count("[lp] SIGTERM: stopping") == 1);
      CHECK(launcher.count("asked the program to stop") == 0);  // no node got it
    }
  }

  TEST_CASE("kill -TERM -<the launcher's process group>: one clean stop") {
    mp::scratch dir;
    mp::command launcher(mp::saved_on_stop(dir));  // it leads a process group of its own
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                           std::chrono::seconds(60)));
    auto nodes = launcher.children();
    CHECK(nodes.size() == 3);
    REQUIRE(::kill(-launcher.pid, SIGTERM) == 0);
    mp::check_one_clean_stop(launcher, dir, nodes,
                             launcher.wait(std::chrono::seconds(60)));
    CHECK(launcher.count("[lp] SIGTERM: stopping every node") == 1);
  }

  TEST_CASE(
      "SIGTERM to every process of the launch at once, as a cgroup kill: one clean "
      "stop") {
    for (bool nodes_first : {true, false}) {
      CAPTURE(nodes_first);
      mp::scratch dir;
      mp::command launcher(mp::saved_on_stop(dir));
      REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                             std::chrono::seconds(60)));
      auto nodes = launcher.children();
      CHECK(nodes.size() == 3);
      auto everyone = nodes;
      everyone.insert(nodes_first ? everyone.end() : everyone.begin(), launcher.pid);
      for (auto pid : everyone) ::kill(pid, SIGTERM);
      mp::check_one_clean_stop(launcher, dir, nodes,
                               launcher.wait(std::chrono::seconds(60)));
    }
  }

  TEST_CASE(
      "SIGTERM to one node process alone stops the program, as lp::stop() there would") {
    mp::scratch dir;
    mp::command launcher(mp::saved_on_stop(dir));
    REQUIRE(mp::eventually([&] { return launcher.count("serving at") == 3; },
                           std::chrono::seconds(60)));
    auto nodes = launcher.children();
    REQUIRE(nodes.size() == 3);
    ::kill(nodes[1], SIGTERM);
    mp::check_one_clean_stop(launcher, dir, nodes,
                             launcher.wait(std::chrono::seconds(60)));
    CHECK(launcher.count("asked the program to stop") == 1);
    CHECK(launcher.count("stopping every node") == 0);  // the launcher got no signal
  }

  TEST_CASE(
      "the run directory lists every node's address in `nodes`, for tools that attach") {
    mp::scratch dir;
    lp::program p("scenario_sleepers");
    scenarios::make(p, "sleepers", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, mp::scenario_options("sleepers", dir));
    std::map<std::string, std::string> listed;
    REQUIRE(mp::eventually(
        [&] {
          std::ifstream nodes(running.run_dir() + "/nodes");
          for (std::string label, url; nodes >> label >> url;) listed[label] = url;
          return listed.size() == 3;
        },
        std::chrono::seconds(30)));
    CHECK(listed == running.urls());
    CHECK(running.stop());
  }

  TEST_CASE("lp::stop() in one node process stops them all") {
    mp::scratch dir;
    lp::program p("scenario_stopper");
    scenarios::make(p, "stopper", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, mp::scenario_options("stopper", dir));
    running.wait();
    CHECK(dir.has("sleepers-0.stopped"));
  }

  TEST_CASE(
      "a group's restart policy: restarted crashes are no failure, the one past them "
      "is") {
    {
      mp::scratch dir;
      lp::program p("scenario_flaky");
      scenarios::make(p, "flaky", dir.path);  // 2 crashes, 3 restarts allowed
      auto running =
          lp::launch<lp::test_multi_processing>(p, mp::scenario_options("flaky", dir));
      auto flaky = running.client(p.find<scenarios::Flaky>("flaky/0"));
      std::string answer;
      CHECK(mp::eventually(
          [&] {
            try {
              answer = flaky.ping();  // a caller retries an idempotent call, nothing more
              return true;
            } catch (const lp::transport_error&) {
              return false;
            }
          },
          std::chrono::seconds(20)));
      CHECK(answer == "pong");
      std::ifstream starts(dir.path + "/flaky.starts");
      int count = 0;
      starts >> count;
      CHECK(count == 3);
      CHECK(running.pids().size() == 1);  // the third process
      // As docs/launching.md says: the two crashes count against neither
      // stop() nor wait(), and summary() does not list them.
      CHECK(running.summary().empty());
      CHECK(running.stop());
      CHECK(running.summary().empty());
      CHECK_NOTHROW(running.wait());
    }
    {
      // Four crashes (the start count begins at -2) against three restarts:
      // the fourth crash fails the program, and is the one summary() lists.
      mp::scratch dir;
      std::ofstream(dir.path + "/flaky.starts") << -2;
      lp::program p("scenario_flaky");
      scenarios::make(p, "flaky", dir.path);
      auto running =
          lp::launch<lp::test_multi_processing>(p, mp::scenario_options("flaky", dir));
      CHECK_THROWS_AS(running.wait(), lp::node_failure);
      auto summary = running.summary();
      INFO(summary);
      CHECK(
          summary.rfind("[lp] node flaky/0 failed: exited with status 3 after 3 restarts "
                        "(restart_on_failure(3))\n",
                        0) == 0);
      CHECK(summary.find("failed:", summary.find("failed:") + 1) ==
            std::string::npos);  // one, not four
      CHECK(summary.find("crashing on start 2") != std::string::npos);
      CHECK(summary.find("crashing on start -1") !=
            std::string::npos);  // last lines span restarts
      CHECK_FALSE(running.stop());
      int count = 0;
      std::ifstream(dir.path + "/flaky.starts") >> count;
      CHECK(count == 2);  // started four times: -1, 0, 1, 2
    }
  }

  TEST_CASE(
      "without a restart policy a crash stops the program, with the node's last words") {
    mp::scratch dir;
    lp::program p("scenario_flaky_no_restart");
    scenarios::make(p, "flaky_no_restart", dir.path);
    auto running = lp::launch<lp::test_multi_processing>(
        p, mp::scenario_options("flaky_no_restart", dir));
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    auto summary = running.summary();
    CHECK(summary.find("node flaky/0 failed: exited with status 3") != std::string::npos);
    CHECK(summary.find("crashing on start 1") != std::string::npos);
    auto counter = running.client(p.find<scenarios::Counter>("counter"));
    CHECK_THROWS_WITH_AS(counter.get(), doctest::Contains("counter.get"),
                         lp::transport_error);
  }

  TEST_CASE("a call issued before its node serves waits for it") {
    mp::scratch dir;
    lp::program p("scenario_late");
    scenarios::make(p, "late", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, mp::scenario_options("late", dir));
    CHECK(running.client(p.find<scenarios::Late>("late")).ping() == 7);
  }

  TEST_CASE(
      "a node that starts while the program stops ends with it: the stop is no "
      "failure") {
    mp::scratch dir;
    lp::program p("scenario_starting_at_stop");
    scenarios::make(p, "starting_at_stop", dir.path);
    auto running = lp::launch<lp::test_multi_processing>(
        p, mp::scenario_options("starting_at_stop", dir));
    // Its constructor calls the counter until the stop refuses a call.
    REQUIRE(mp::eventually([&] { return dir.has("starter.calling"); },
                           std::chrono::seconds(60)));
    CHECK(running.stop());
    INFO(running.summary());
    CHECK(running.summary().empty());
  }

  TEST_CASE("64 nodes, as 64 processes and colocated in one, launch and stop cleanly") {
    for (std::string scenario : {"many", "many_colocated"}) {
      INFO(scenario);
      mp::scratch dir;
      lp::program p("scenario_" + scenario);
      scenarios::make(p, scenario, dir.path);
      auto running =
          lp::launch<lp::test_multi_processing>(p, mp::scenario_options(scenario, dir));
      CHECK(running.pids().size() == (scenario == "many" ? 64 : 1));
      auto last = running.client(p.find<scenarios::Counter>("many/63"));
      CHECK(last.add(5) == 5);
      CHECK(running.stop());
      INFO(running.summary());
      CHECK(running.summary().empty());
    }
  }
}
