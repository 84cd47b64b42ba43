// Python nodes in a program launched as threads (test_multi_threading): a
// Python process per Python node. Needs LP_TEST_PYTHON (an interpreter with
// numpy and cbor2) and PYTHONPATH holding python/ and this folder, as meson
// sets them.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../command.hpp"
#include "services.hpp"

namespace {

lp::test_options with_python() {
  lp::test_options options;
  options.python =
      std::getenv("LP_TEST_PYTHON") ? std::getenv("LP_TEST_PYTHON") : "python3";
  return options;
}

// The message of the error that starting `p` throws.
std::string start_error(const lp::program& p) {
  try {
    lp::controller running(p, with_python());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(it started)";
}

// A C++ node of arrays and a Python node given it (pyn::Mirror), hosted
// in this process with their unix sockets in `socket_dir`, as a launch on
// one host hosts them.
struct arrays_and_mirror {
  explicit arrays_and_mirror(const std::string& socket_dir,
                             std::size_t shared_memory_bytes = std::size_t{256} << 20) {
    auto arrays = p.add_node<pyn::Arrays>("arrays");
    p.add_node<pyn::Mirror>("mirror", arrays);
    lp::detail::host_options options;
    options.secret = "0123456789abcdef0123456789abcdef";
    options.python = with_python().python;
    options.socket_dir = socket_dir;
    options.shared_memory_bytes = shared_memory_bytes;
    options.stop_when_runs_finish = false;
    host = std::make_unique<lp::detail::node_host>(p, std::move(options));
  }
  lp::program p{"pyn"};
  std::unique_ptr<lp::detail::node_host> host;
};

// The shared memory this process holds that is not its own pool's: memfd
// segments it has a descriptor of or maps (/proc/self/fd, /proc/self/maps),
// as lines saying which. A peer's segment it still holds is one of them.
std::vector<std::string> segments_not_its_own() {
  auto& pool = lp::detail::segment_pool::of_process();
  std::set<ino_t> own;
  std::vector<std::string> others;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    auto target = std::filesystem::read_symlink(entry.path(), error).string();
    struct stat about {};
    if (error || target.find("memfd:launchpad") == std::string::npos ||
        ::stat(entry.path().c_str(), &about) != 0)
      continue;
    if (pool.own({about.st_dev, about.st_ino}))
      own.insert(about.st_ino);
    else
      others.push_back("descriptor " + entry.path().filename().string() + ": " + target);
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:launchpad") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, permissions, offset, device;
    ino_t inode = 0;
    fields >> range >> permissions >> offset >> device >> inode;
    if (!own.count(inode)) others.push_back("mapping " + line);
  }
  return others;
}

// What /dev/shm holds.
std::set<std::string> dev_shm() {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    names.insert(entry.path().filename().string());
  return names;
}

}  // namespace

TEST_SUITE("python_nodes") {
  TEST_CASE(
      "C++ calls a Python node, which calls C++ back, with its constructor's arguments "
      "(a string literal among them)") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    auto learner = p.add_node<pyn::Learner>("learner", counter, 0.5, "alpha",
                                            std::vector<float>{2.5f, 1.f});
    lp::controller running(p, with_python());
    auto client = running.client(learner);
    CHECK(client.describe() == "alpha:2:2.5");
    CHECK(client.update({1.f, 2.f, 3.f}) == doctest::Approx(3.0));
    CHECK(client.async.update({4.f}).get() == doctest::Approx(2.0));
    CHECK(client.steps() == 2);
    CHECK(running.client(counter).get() == 4);  // the Python node's calls to C++
    CHECK(running.urls().count("learner") == 1);
    running.stop();
  }

  TEST_CASE(
      "plain C++ structs reach Python as dataclasses and come back, and a string "
      "literal reaches __init__") {
    lp::program p("pyn");
    auto walker = p.add_node<pyn::Walker>("walker", pyn::Pose{1, 2, "map"}, "strider");
    lp::controller running(p, with_python());
    auto client = running.client(walker);
    CHECK(client.name() == "strider");
    CHECK(client.walk({{1, 2, "map"}, {0.5f, -1.f}, std::nullopt}) ==
          pyn::Pose{1.5, 1, "map"});
    CHECK(client.walk({{0, 0, "map"}, {1.f, 1.f}, pyn::Pose{9, 9, "goal"}}) ==
          pyn::Pose{1, 1, "goal"});
    CHECK(client.trail() ==
          std::vector<pyn::Pose>{{1, 2, "map"}, {1.5, 1, "map"}, {1, 1, "goal"}});
    running.stop();
  }

  TEST_CASE("a dataclass whose fields are not the C++ struct's: the launch names both") {
    lp::program p("pyn");
    p.add_node<pyn::WalkerOtherPose>("walker");
    auto message = start_error(p);
    CAPTURE(message);
    CHECK(message.find("WalkerOtherPose.walk") != std::string::npos);
    CHECK(message.find(
              "fields ['x', 'y', 'frame'] in C++, ['x', 'z', 'frame'] in Python") !=
          std::string::npos);
  }

  TEST_CASE("a reserved Python node, defined later, and a group's env in its process") {
    lp::program p("pyn");
    auto learner = p.reserve<pyn::Learner>("learner");
    auto counter = p.add_node<pyn::Counter>("counter");
    p.define(learner, counter, 2.0, std::string("late"), std::vector<float>{1.f});
    auto tallies = p.group("tallies");
    tallies.env({{"PYN_GREETING", "hello from the group"}});
    auto tally = tallies.add_node<pyn::Tally>();
    lp::controller running(p, with_python());
    CHECK(running.client(learner).describe() == "late:1:1");
    CHECK(running.client(tally).env("PYN_GREETING") == "hello from the group");
    running.stop();
  }

  TEST_CASE("a std::vector of handles reaches __init__ as a list of clients") {
    lp::program p("pyn");
    std::vector<lp::handle<pyn::Counter>> counters;
    for (int i = 0; i < 3; ++i)
      counters.push_back(p.add_node<pyn::Counter>("counter" + std::to_string(i)));
    auto fanout = p.add_node<pyn::Fanout>("fanout", counters);
    lp::controller running(p, with_python());
    CHECK(running.client(fanout).add_all(2) == 6);
    CHECK(running.client(counters[1]).get() == 2);
    running.stop();
  }

  TEST_CASE("a Python exception reaches the C++ caller as lp::remote_error") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    auto learner = p.add_node<pyn::Learner>("learner", counter, 1.0, std::string("a"),
                                            std::vector<float>{0.f});
    lp::controller running(p, with_python());
    try {
      running.client(learner).fail("the batch is empty");
      FAIL("fail() returned");
    } catch (const lp::remote_error& e) {
      CHECK(e.node() == "learner");
      CHECK(e.method() == "fail");
      CHECK(e.code() == "remote_exception");
      CHECK(std::string(e.what()).find("ValueError: the batch is empty") !=
            std::string::npos);
      CHECK(e.message().find("the batch is empty") != std::string::npos);
    }
    // The node serves on after it.
    CHECK(running.client(learner).steps() == 0);
    running.stop();
  }

  TEST_CASE("a deadline ends a C++ call to a slow Python method") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    auto learner = p.add_node<pyn::Learner>("learner", counter, 1.0, std::string("a"),
                                            std::vector<float>{0.f});
    lp::controller running(p, with_python());
    auto hurried = running.client(learner).with_deadline(std::chrono::milliseconds(200));
    CHECK_THROWS_AS(hurried.sleep_ms(5000), lp::deadline_exceeded);
    running.stop();
  }

  TEST_CASE("a C++ run() drives a Python node") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    auto learner = p.add_node<pyn::Learner>("learner", counter, 1.0, std::string("a"),
                                            std::vector<float>{0.f});
    p.add_node<pyn::Actor>("actor", learner);
    lp::controller running(p, with_python());
    CHECK(running.wait({"actor"}));
    CHECK(running.client(counter).get() == 9);
    CHECK(running.client(learner).steps() == 3);
    running.stop();
  }

  TEST_CASE(
      "a Python run() starts once every node serves, calls C++, and tells its end") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    p.add_node<pyn::Runner>("runner", counter, 5, false);
    lp::controller running(p, with_python());
    CHECK(running.wait({"runner"}));
    CHECK(running.client(counter).get() == 5);
    running.stop();
  }

  TEST_CASE("a Python node's stop() stops the program") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    p.add_node<pyn::Runner>("runner", counter, 2, true);
    lp::controller running(p, with_python());
    CHECK(running.wait_for(std::chrono::seconds(60)));
  }

  TEST_CASE("a Python node killed with SIGKILL fails the program, naming it") {
    lp::program p("pyn");
    auto counter = p.add_node<pyn::Counter>("counter");
    auto learner = p.add_node<pyn::Learner>("learner", counter, 1.0, std::string("a"),
                                            std::vector<float>{0.f});
    lp::controller running(p, with_python());
    auto pid = static_cast<pid_t>(running.client(learner).sleep_ms(0));
    REQUIRE(pid > 0);
    ::kill(pid, SIGKILL);
    try {
      running.wait_for(std::chrono::seconds(30));
      FAIL("the program did not fail");
    } catch (const lp::node_failure& e) {
      CHECK(std::string(e.what()).find("learner") != std::string::npos);
      CHECK(std::string(e.what()).find("SIGKILL") != std::string::npos);
    }
  }

  TEST_CASE(
      "a class unlike its declaration stops the launch before it runs, saying how") {
    struct expectation {
      std::string what;
      std::vector<std::string> said;
    };
    auto check = [](const std::string& message, const std::vector<std::string>& said) {
      CAPTURE(message);
      for (const auto& words : said) CHECK(message.find(words) != std::string::npos);
    };
    {
      lp::program p("pyn");
      p.add_node<pyn::MissingMethod>("learner");
      check(start_error(p), {"learner", "update"});
    }
    {
      lp::program p("pyn");
      p.add_node<pyn::ArityDiffers>("learner");
      check(start_error(p), {"learner", "update", "1", "2"});
    }
    {
      lp::program p("pyn");
      p.add_node<pyn::TypeDiffers>("learner");
      check(start_error(p), {"learner", "update", "std::vector<float>", "Python float"});
    }
    {
      lp::program p("pyn");
      p.add_node<pyn::RunDeclaredOnly>("learner");
      check(start_error(p), {"learner", "run"});
    }
  }

  TEST_CASE(
      "a module that does not import, a missing class, a raising __init__: clear "
      "failures") {
    {
      lp::program p("pyn");
      p.add_node<pyn::ImportFails>("learner");
      auto message = start_error(p);
      CAPTURE(message);
      CHECK(message.find("a_package_that_is_not_installed") != std::string::npos);
      CHECK(message.find("broken_module") != std::string::npos);
    }
    {
      lp::program p("pyn");
      p.add_node<pyn::ClassMissing>("learner");
      auto message = start_error(p);
      CAPTURE(message);
      CHECK(message.find("NoSuchClass") != std::string::npos);
    }
    {
      lp::program p("pyn");
      p.add_node<pyn::InitRaises>("learner");
      auto message = start_error(p);
      CAPTURE(message);
      CHECK(message.find("no GPU here") != std::string::npos);
    }
  }

  TEST_CASE("an interpreter that cannot be run is named, with the flag that chose it") {
    test_process::scratch dir;
    std::ofstream(dir.path + "/not_executable") << "#!/bin/sh\n";
    std::ofstream(dir.path + "/no_program") << "neither ELF nor #!\n";
    ::chmod((dir.path + "/no_program").c_str(), 0755);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"no-such-python3", "on PATH"},
        {"/nonexistent/python3", "is not there"},
        {dir.path, "is a directory"},
        {dir.path + "/not_executable", "is not an executable file"},
        {dir.path + "/no_program", "cannot be run (Exec format error)"},
    };
    for (const auto& one : cases) {
      // Not a structured binding: clang++ 14 cannot capture one (CAPTURE).
      const std::string& interpreter = one.first;
      const std::string& why = one.second;
      CAPTURE(interpreter);
      lp::program p("pyn");
      p.add_node<pyn::Tally>("tally");
      auto options = with_python();
      options.python = interpreter;
      try {
        lp::controller running(p, options);
        FAIL("it started");
      } catch (const std::exception& e) {
        std::string message = e.what();
        CAPTURE(message);
        CHECK(message.find("'" + interpreter + "'") != std::string::npos);
        CHECK(message.find(why) != std::string::npos);
        CHECK(message.find("--lp_python") != std::string::npos);
        // Not the package's fault.
        CHECK(message.find("importable") == std::string::npos);
      }
    }
  }
  TEST_CASE(
      "on one host, C++ and a Python node call each other over their unix sockets, "
      "large arrays through shared memory") {
    test_process::scratch dir;  // 0700, as a launch's run directory
    arrays_and_mirror hosted(dir.path);
    auto& host = hosted.host;
    for (const char* label : {"arrays", "mirror"}) {
      CAPTURE(label);
      struct stat about {};
      REQUIRE(::stat((dir.path + "/" + lp::detail::socket_file_name(label)).c_str(),
                     &about) == 0);
      CHECK(S_ISSOCK(about.st_mode));
      CHECK((about.st_mode & 0777) == 0600);
    }
    auto mirror = lp::detail::client_access::make<pyn::Mirror>(host->connect("mirror"));
    auto& pool = lp::detail::segment_pool::of_process();
    std::vector<float> values(1 << 20);  // 4 MB
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    CHECK(mirror.echo(values) == values);  // the connection learns: segments from now on
    auto before = pool.counts();
    for (int i = 0; i < 10; ++i) REQUIRE(mirror.echo(values) == values);
    // numpy read the arguments in place, without a copy.
    CHECK(mirror.in_shared_memory(values));
    CHECK_FALSE(mirror.in_shared_memory(std::vector<float>(100)));  // small: in the body
    // The Python node's calls to C++ take the C++ node's socket, and read
    // its replies in place.
    CHECK(mirror.relay(1 << 20, 10));
    CHECK(mirror.shared_messages() >= 20);
    auto python_bytes = mirror.shared_bytes();
    CHECK(mirror.relay(1 << 20, 10));
    // Its segments came back: none made anew.
    CHECK(mirror.shared_bytes() == python_bytes);
    auto after = pool.counts();
    CHECK(after.lent >= before.lent + 10);
    CHECK(after.fallbacks == before.fallbacks);
    host.reset();
    // Each node took its socket away with it.
    CHECK(std::filesystem::is_empty(dir.path));
  }
  TEST_CASE(
      "a Python node's shared memory has its host's cap (--lp_shared_memory_mb): past it "
      "its replies' arrays go through the socket, counted; 0 lends none") {
    test_process::scratch dir;
    std::vector<float> values(1 << 20);  // 4 MB
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    for (std::size_t cap : {std::size_t{1} << 20, std::size_t{0}}) {
      CAPTURE(cap);
      arrays_and_mirror hosted(dir.path, cap);
      auto mirror =
          lp::detail::client_access::make<pyn::Mirror>(hosted.host->connect("mirror"));
      for (int i = 0; i < 3; ++i) REQUIRE(mirror.echo(values) == values);
      CHECK_FALSE(mirror.in_shared_memory(values));  // this process's pool: capped too
      // Its replies lent no segment: past 1 MiB each fell back, counted;
      // at 0 none was tried (the caller said it reads none).
      CHECK(mirror.shared_messages() == 0);
      CHECK(mirror.shared_bytes() == 0);
      if (cap > 0)
        CHECK(mirror.shared_fallbacks() >= 2);
      else
        CHECK(mirror.shared_fallbacks() == 0);
      hosted.host.reset();
    }
    // The default cap again (this process's pool is set by its host).
    arrays_and_mirror hosted(dir.path);
    auto mirror =
        lp::detail::client_access::make<pyn::Mirror>(hosted.host->connect("mirror"));
    for (int i = 0; i < 3; ++i) REQUIRE(mirror.echo(values) == values);
    CHECK(mirror.in_shared_memory(values));
    CHECK(mirror.shared_messages() >= 2);
  }
  TEST_CASE(
      "a Python node killed with SIGKILL mid-transfer, both ways, leaves no segment, "
      "descriptor or mapping of its in the C++ process, and nothing in /dev/shm") {
    test_process::scratch dir;
    auto shm_before = dev_shm();
    arrays_and_mirror hosted(dir.path);
    auto& host = hosted.host;
    auto mirror = lp::detail::client_access::make<pyn::Mirror>(host->connect("mirror"));
    auto pid = static_cast<pid_t>(mirror.pid());
    REQUIRE(pid > 0);
    std::vector<float> values(1 << 20);  // 4 MB
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    // C++ -> Python (echo) and Python -> C++ (relay, to the Arrays node of
    // this process) at once, until the kill ends them; bounded in count.
    std::atomic<int> echoes{0}, relays{0};
    std::atomic<bool> echo_failed{false}, relay_failed{false};
    std::thread echoing([&] {
      try {
        for (int i = 0; i < 5000; ++i, ++echoes) mirror.echo(values);
      } catch (const std::exception&) {
        echo_failed = true;
      }
    });
    std::thread relaying([&] {
      try {
        for (int i = 0; i < 1000; ++i, ++relays) mirror.relay(1 << 20, 5);
      } catch (const std::exception&) {
        relay_failed = true;
      }
    });
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((echoes < 3 || relays < 2) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    echoing.join();
    relaying.join();
    // The kill came while both were still calling.
    CHECK(echo_failed);
    CHECK(relay_failed);
    // The connections the kill broke let go of what they held of its.
    std::vector<std::string> left;
    for (int i = 0; i < 200; ++i) {
      left = segments_not_its_own();
      if (left.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_MESSAGE(left.empty(), (left.empty() ? std::string() : left.front()));
    CHECK(dev_shm() == shm_before);
    host.reset();
    CHECK(segments_not_its_own().empty());
    CHECK(dev_shm() == shm_before);
    // Its socket went with the host.
    CHECK(std::filesystem::is_empty(dir.path));
  }
}
