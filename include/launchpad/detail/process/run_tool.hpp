#pragma once

// Running a helper program (tmux; Slurm's sbatch, squeue, scancel, sinfo)
// to its end, and reading what it prints.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <launchpad/detail/util/shell_words.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace lp::detail {

struct tool_output {
  int status = -1;   // the exit status; -1 if it could not run or a signal ended it
  std::string text;  // stdout and stderr, interleaved
};

// Runs `command` (argv[0] looked up in PATH) with no input, in a process
// group of its own, and collects what it prints. A tool can hang (Slurm's
// commands retry an unreachable controller for minutes; tmux waits for its
// server): one still running after `limit` is killed with its group, and
// reaped, and lp::launch_error names it and the limit.
inline tool_output run_tool(const std::vector<std::string>& command,
                            std::chrono::seconds limit) {
  using clock = std::chrono::steady_clock;
  tool_output out;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    out.text = "cannot create a pipe to run " + command[0] + ": " + std::strerror(errno);
    return out;
  }
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, ends[1], 1);
  posix_spawn_file_actions_adddup2(&actions, ends[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  int failed = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ends[1]);
  if (failed) {
    ::close(ends[0]);
    out.text = failed == ENOENT ? command[0] + " is not on PATH"
                                : command[0] + " could not run: " + std::strerror(failed);
    return out;
  }
  auto deadline = clock::now() + limit;
  int status = 0;
  bool ended = false;
  bool reading = true;
  char buffer[4096];
  while (!ended) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ::close(ends[0]);
      std::string line;
      for (const auto& word : command)
        line += (line.empty() ? "" : " ") + shell_quote(word);
      throw launch_error(command[0] + " did not answer within " +
                         std::to_string(limit.count()) + " s, and was killed; run `" +
                         line + "` by hand to see what it waits for");
    }
    if (reading) {
      // A slice at a time: a tool that has ended may have left its end of
      // the pipe to a process it started.
      pollfd fd{ends[0], POLLIN, 0};
      int ready = ::poll(&fd, 1, static_cast<int>(std::min<long>(left.count(), 100)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready > 0) {
        auto n = ::read(ends[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0)
          out.text.append(buffer, static_cast<std::size_t>(n));
        else
          reading = false;  // every writer is gone
      }
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(1)));
    }
    ended = ::waitpid(pid, &status, WNOHANG) == pid;
  }
  // What it wrote just before it ended.
  if (reading) {
    ::fcntl(ends[0], F_SETFL, O_NONBLOCK);
    for (ssize_t n; (n = ::read(ends[0], buffer, sizeof buffer)) > 0;)
      out.text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(ends[0]);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// run_tool for a tool whose failure the caller outlives (a cancel, a
// cleanup, a question asked again later): a timeout is said on stderr, and
// comes back as a failed run with the message as its output.
inline tool_output try_tool(const std::vector<std::string>& command,
                            std::chrono::seconds limit) {
  try {
    return run_tool(command, limit);
  } catch (const launch_error& e) {
    std::cerr << "[lp] " << e.what() << std::endl;
    return {-1, e.what()};
  }
}

}  // namespace lp::detail
