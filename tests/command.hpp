#pragma once
// For tests that start real processes: waiting with a bound, and a command
// run with its output captured and killed with its process group if the test
// ends first.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace test_process {

// The test program meson builds (tests/processes/program.cpp).
inline std::string program_path() {
  const char* path = std::getenv("LP_TEST_PROGRAM");
  REQUIRE_MESSAGE(path, "meson sets LP_TEST_PROGRAM to tests/processes/program");
  return path;
}

// A scratch directory, removed afterwards.
struct scratch {
  scratch() {
    std::string pattern = "/tmp/lp-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()));
    path = pattern;
  }
  ~scratch() { std::filesystem::remove_all(path); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  bool has(const std::string& name) const {
    return std::filesystem::exists(path + "/" + name);
  }
  // The first line of a file in it.
  std::string read(const std::string& name) const {
    std::string text;
    std::getline(std::ifstream(path + "/" + name), text);
    return text;
  }
  std::string path;
};

template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A launcher run as a command would be: its stdout and stderr captured, and
// killed with its process group if the test ends first.
struct command {
  explicit command(std::vector<std::string> args) {
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::setpgid(0, 0);
      ::dup2(ends[1], 1);
      ::dup2(ends[1], 2);
      ::close(ends[0]);
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(ends[1]);
    reader = std::thread([this, fd = ends[0]] {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
        std::lock_guard lock(mutex);
        text.append(buffer, static_cast<std::size_t>(n));
      }
      ::close(fd);
      std::lock_guard lock(mutex);
      drained = true;
    });
  }
  ~command() {
    if (!status) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    reader.join();
  }
  std::string output() {
    std::lock_guard lock(mutex);
    return text;
  }
  std::size_t count(const std::string& part) {
    auto all = output();
    std::size_t n = 0;
    for (auto at = all.find(part); at != std::string::npos; at = all.find(part, at + 1))
      ++n;
    return n;
  }
  // The exit code, or 128 + the number of the signal that ended it; nothing
  // if it did not end in time.
  std::optional<int> exit_code(std::chrono::milliseconds limit) {
    auto raw = wait(limit);
    if (!raw) return std::nullopt;
    return WIFEXITED(*raw) ? WEXITSTATUS(*raw) : 128 + WTERMSIG(*raw);
  }
  // The raw wait status, or nothing if it did not end in time.
  // Once it ended, its output is all read too (a busy machine may leave the
  // reader behind), unless a stray process it left holds the pipe a while.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    eventually(
        [&] {
          int raw = 0;
          if (::waitpid(pid, &raw, WNOHANG) == pid) status = raw;
          return status.has_value();
        },
        limit);
    if (status)
      eventually(
          [&] {
            std::lock_guard lock(mutex);
            return drained;
          },
          std::chrono::seconds(5));
    return status;
  }
  // The launcher's children: its node processes.
  std::vector<pid_t> children() {
    std::vector<pid_t> out;
    DIR* tasks = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
    if (!tasks) return out;
    while (auto* task = ::readdir(tasks)) {
      std::ifstream list("/proc/" + std::to_string(pid) + "/task/" + task->d_name +
                         "/children");
      for (pid_t child; list >> child;) out.push_back(child);
    }
    ::closedir(tasks);
    return out;
  }

  pid_t pid = -1;
  std::optional<int> status;
  std::mutex mutex;
  std::string text;
  bool drained = false;  // the reader saw the pipe's end
  std::thread reader;
};

}  // namespace test_process
