#pragma once

// Running Slurm's commands (sbatch, squeue, scancel, sinfo) and reading
// what they print.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <launchpad/detail/util/shell_words.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace lp::detail {

struct tool_output {
  int status = -1;     // the exit status; -1 if it could not run or was killed
  std::string text;    // stdout and stderr, interleaved
};

// Runs `command` (argv[0] looked up in PATH) and collects what it prints.
// Slurm's commands retry an unreachable controller for minutes; a command
// still running after `limit` is killed and reported as failed.
inline tool_output capture_tool(const std::vector<std::string>& command,
                                std::chrono::seconds limit = std::chrono::seconds(60)) {
  tool_output out;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return out;
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, ends[1], 1);
  posix_spawn_file_actions_adddup2(&actions, ends[1], 2);
  pid_t pid = -1;
  int failed = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ends[1]);
  if (failed) {
    ::close(ends[0]);
    out.text = command[0] + " is not on PATH";
    return out;
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      out.text += "\n" + command[0] + " did not answer within " +
                  std::to_string(limit.count()) + " s";
      break;
    }
    pollfd fd{ends[0], POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    auto n = ::read(ends[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(ends[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The absolute path of a program in PATH, for starting it with execve.
inline std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    auto colon = dirs.find(':', start);
    if (colon == std::string_view::npos) colon = dirs.size();
    auto candidate = std::string(dirs.substr(start, colon - start)) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  throw launch_error(name + " is not on PATH; is this a host of a Slurm cluster?");
}


// What the tools print, in pieces: squeue's and sinfo's rows and fields.
inline std::string tool_trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

inline std::vector<std::string> tool_split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= text.size();) {
    auto at = text.find(separator, start);
    if (at == std::string_view::npos) at = text.size();
    parts.emplace_back(text.substr(start, at - start));
    start = at + 1;
  }
  return parts;
}

}  // namespace lp::detail
