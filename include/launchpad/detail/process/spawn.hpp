#pragma once

// Starting and ending the node processes of a launch.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <launchpad/error.hpp>
#include <string>
#include <vector>

extern char** environ;

namespace lp::detail {

// The path of the running executable, so a launch can start it again.
inline std::string this_executable() {
  std::string path(4096, '\0');
  auto length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0) throw launch_error("cannot find this program's executable");
  path.resize(static_cast<std::size_t>(length));
  return path;
}

struct child_process {
  std::string executable;
  std::vector<std::string> arguments;    // argv, from argv[0]
  std::vector<std::string> environment;  // added to this process's, "NAME=value"
  int output_fd = -1;                    // becomes the child's stdout
  int error_fd = -1;                     // becomes the child's stderr
};

// Starts the child in a process group of its own, so a Ctrl+C at the
// terminal reaches only the launcher, which stops the nodes in order. The
// child dies with the thread that started it (PR_SET_PDEATHSIG): keep that
// thread alive for as long as the launch runs.
inline pid_t spawn(const child_process& child) {
  // Everything the child needs is prepared here: between fork and exec it
  // may only make async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (const auto& argument : child.arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  for (char** variable = environ; *variable; ++variable) envp.push_back(*variable);
  for (const auto& variable : child.environment) envp.push_back(const_cast<char*>(variable.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  sigset_t none;
  sigemptyset(&none);

  pid_t pid = ::fork();
  if (pid < 0) throw launch_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl
    ::dup2(child.output_fd, 1);
    ::dup2(child.error_fd, 2);
    // Nothing of the launcher's leaks in: not its other pipes, not its
    // listening sockets, not its blocked signals.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(child.executable.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent, so that killpg works at once
  return pid;
}

// Runs a helper program (argv[0] looked up in PATH) to its end, its output
// discarded; returns its exit status, or -1 if it could not run.
inline int run_tool(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int failed = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// How a child ended, in words for the launch's summary.
inline std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return std::string("killed by signal ") + (name ? std::string("SIG") + name : std::to_string(WTERMSIG(status)));
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace lp::detail
