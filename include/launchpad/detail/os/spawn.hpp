#pragma once

// Starting and ending the node processes of a launch.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace lp::detail {

// The absolute path of a program in PATH, as execvp would find it, for
// starting it with execve; nothing if no directory of PATH holds it.
inline std::optional<std::string> on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (auto dir : split(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    auto candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// The path of the running executable, so a launch can start it again.
inline std::string this_executable() {
  std::string path(4096, '\0');
  auto length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0) throw launch_error("cannot find this program's executable");
  path.resize(static_cast<std::size_t>(length));
  return path;
}

// The child could not run its executable: execve failed, for `reason`
// (errno's text: no such file, permission denied, exec format error).
class exec_error : public launch_error {
 public:
  exec_error(const std::string& executable, int number)
      : launch_error("cannot run " + executable + ": " + std::strerror(number)),
        reason(std::strerror(number)) {}
  std::string reason;
};

struct child_process {
  std::string executable;
  std::vector<std::string> arguments;    // argv, from argv[0]
  std::vector<std::string> environment;  // added to this process's, "NAME=value"
  int output_fd = -1;                    // becomes the child's stdout
  int error_fd = -1;                     // becomes the child's stderr
  int passed_fd = -1;                    // if set, becomes the child's fd 3
};

// A forked child keeps its parent's signal handlers until execve. A stop
// signal that reached it there ran the launcher's handler in the child
// (which wrote it into the launcher's own signal pipe), and the node then
// started and never heard it: seen as a node that did not stop, when a
// launch stopped just as it started (under ThreadSanitizer, 1 run in 15).
// So the parent forks with every signal blocked, and the child puts back the
// default actions, as execve would, before it unblocks them: a signal that
// came meanwhile ends it, which the launcher counts as a clean stop.
class fork_guard {
 public:
  fork_guard() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &saved_);
  }
  fork_guard(const fork_guard&) = delete;
  fork_guard& operator=(const fork_guard&) = delete;
  ~fork_guard() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

  // In the child, before execve; async-signal-safe. Ignored signals stay
  // ignored, as across execve.
  static void child_ready_for_signals() {
    for (int signal = 1; signal < NSIG; ++signal) {
      struct sigaction now {};
      if (::sigaction(signal, nullptr, &now) != 0 || now.sa_handler == SIG_IGN ||
          now.sa_handler == SIG_DFL)
        continue;
      struct sigaction reset {};
      reset.sa_handler = SIG_DFL;
      ::sigaction(signal, &reset, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }

 private:
  sigset_t saved_;
};

// Starts the child in a process group of its own, so a Ctrl+C at the
// terminal reaches only the launcher, which stops the nodes in order. The
// child dies with the thread that started it (PR_SET_PDEATHSIG): keep that
// thread alive for as long as the launch runs. Throws exec_error if the
// executable cannot be run: the child says why over a close-on-exec pipe,
// which closes unread when execve succeeds.
inline pid_t spawn(const child_process& child) {
  // Everything the child needs is prepared here: between fork and exec it
  // may only make async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (const auto& argument : child.arguments)
    argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  // The child's own values replace this process's: getenv takes the first.
  auto replaced = [&](std::string_view variable) {
    auto name = variable.substr(0, variable.find('=') + 1);
    for (const auto& own : child.environment)
      if (std::string_view(own).starts_with(name)) return true;
    return false;
  };
  for (char** variable = environ; *variable; ++variable)
    if (!replaced(*variable)) envp.push_back(*variable);
  for (const auto& variable : child.environment)
    envp.push_back(const_cast<char*>(variable.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  int report[2] = {-1, -1};
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw launch_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  // Above the descriptors the child sets up (0 to 3), so that none lands on it.
  int report_end = ::fcntl(report[1], F_DUPFD_CLOEXEC, 10);
  ::close(report[1]);
  fork_guard guard;
  pid_t pid = ::fork();
  if (pid < 0) {
    auto why = std::string("fork failed: ") + std::strerror(errno);
    ::close(report[0]);
    ::close(report_end);
    throw launch_error(why);
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl
    ::dup2(child.output_fd, 1);
    ::dup2(child.error_fd, 2);
    int first_closed = 3;
    if (child.passed_fd >= 0) {
      // dup2 onto itself would keep close-on-exec.
      if (child.passed_fd == 3)
        ::fcntl(3, F_SETFD, 0);
      else
        ::dup2(child.passed_fd, 3);
      first_closed = 4;
    }
    // Nothing of the launcher's leaks in: not its other pipes, not its
    // listening sockets, not its signal handlers or blocked signals. The
    // report's end stays until execve closes it.
    auto first = static_cast<unsigned>(first_closed);
    auto kept = static_cast<unsigned>(report_end);
    if (::syscall(SYS_close_range, first, kept - 1, 0U) != 0 ||
        ::syscall(SYS_close_range, kept + 1, ~0U, 0U) != 0)
      for (int fd = first_closed; fd < 65536; ++fd)
        if (fd != report_end) ::close(fd);
    fork_guard::child_ready_for_signals();
    ::execve(child.executable.c_str(), argv.data(), envp.data());
    int number = errno;
    [[maybe_unused]] auto written = ::write(report_end, &number, sizeof number);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent, so that killpg works at once
  ::close(report_end);
  int number = 0;
  ssize_t got;
  while ((got = ::read(report[0], &number, sizeof number)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof number)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw exec_error(child.executable, number);
  }
  return pid;
}

// Kills the process groups of a launch's nodes, and clears the run
// directories it made, if the process that made them dies without doing it,
// even by SIGKILL. A node process dies with its launcher (PR_SET_PDEATHSIG),
// but what it started does not: a data loader, a simulator, their own
// children. They stay in the node's process group, so a process that
// outlives the launcher kills those groups: a shell, in a group of its own,
// deaf to Ctrl+C and SIGTERM, that reads group ids and directories from a
// socket and, when the socket reaches its end without a "done", kills the
// groups, then clears each directory as run_directory does at its end
// (everything but logs/). Needs no privileges, and no next launch to sweep
// after this one; it cannot reach a descendant that left the group (setsid,
// setpgid), nor survive SIGKILL of its own (docs/launching.md, "No
// orphans").
class group_reaper {
 public:
  group_reaper() {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
      throw launch_error(std::string("cannot create a socket pair: ") +
                         std::strerror(errno));
    // A directory is a line of its own: its name may hold spaces.
    static constexpr const char* script =
        "trap '' INT TERM HUP PIPE\n"
        "groups=\n"
        "dirs=\n"
        "nl='\n'\n"
        "while IFS= read -r line; do\n"
        "  word=${line%% *} arg=${line#* }\n"
        "  case $word in\n"
        "    done) exit 0 ;;\n"
        "    watch) groups=\"$groups -$arg\" ;;\n"
        "    forget) kept=; for g in $groups; do [ \"$g\" = \"-$arg\" ] || "
        "kept=\"$kept $g\"; done; groups=$kept ;;\n"
        "    clear) dirs=\"$dirs$arg$nl\" ;;\n"
        "    spare) kept=; while IFS= read -r d; do [ -z \"$d\" ] || "
        "[ \"$d\" = \"$arg\" ] || kept=\"$kept$d$nl\"; done <<END\n"
        "$dirs\n"
        "END\n"
        "      dirs=$kept ;;\n"
        "  esac\n"
        "done\n"
        "[ -z \"$groups\" ] || kill -9 $groups 2>/dev/null\n"
        "printf %s \"$dirs\" | while IFS= read -r d; do\n"
        "  case $d in /?*) ;; *) continue ;; esac\n"
        "  for f in \"$d\"/* \"$d\"/.[!.]* \"$d\"/..?*; do\n"
        "    if [ \"$f\" != \"$d/logs\" ] && { [ -e \"$f\" ] || [ -L \"$f\" ]; }; then "
        "rm -rf -- \"$f\"; fi\n"
        "  done\n"
        "  rmdir -- \"$d/logs\" \"$d\" 2>/dev/null\n"
        "done\n";
    const char* argv[] = {"lp-group-reaper", "-c", script, nullptr};
    const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
    // Forked twice, so that it is nobody's child here: the launcher's own
    // children are its nodes. Only async-signal-safe calls until execve.
    fork_guard guard;
    pid_t middle = ::fork();
    if (middle < 0) {
      ::close(ends[0]);
      ::close(ends[1]);
      throw launch_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (middle == 0) {
      if (::fork() != 0) ::_exit(0);
      ::setpgid(0, 0);
      ::dup2(ends[1], 0);
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
        for (int fd = 3; fd < 65536; ++fd) ::close(fd);
      fork_guard::child_ready_for_signals();
      ::execve("/bin/sh", const_cast<char* const*>(argv), const_cast<char* const*>(envp));
      ::_exit(127);
    }
    ::close(ends[1]);
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    to_reaper_ = ends[0];
  }
  group_reaper(const group_reaper&) = delete;
  group_reaper& operator=(const group_reaper&) = delete;
  // The launcher ends in order: it has stopped every group itself.
  ~group_reaper() {
    say("done");
    ::close(to_reaper_);
  }

  // Under Slurm a node process is its own launcher's child no more (srun's
  // slurmstepd starts it), and proctrack/linuxproc finds a step's processes
  // by parentage, which an orphaned grandchild has lost. So such a process
  // leads a group of its own and leaves a reaper watching it for as long as
  // it lives: whatever is left in its group is killed when it ends, by exit
  // or by SIGKILL. False (nothing watches) if it cannot lead its group.
  static bool watch_own_group_for_life() {
    if (::getpgrp() != ::getpid() && ::setpgid(0, 0) != 0) return false;
    of_this_process().watch(::getpid());
    return true;
  }

  // This process's, started at its first use and never destroyed: its
  // socket closes with the process, however it ends, without "done". What
  // it was told and not told to forget or spare is reaped then.
  static group_reaper& of_this_process() {
    static auto* reaper = new group_reaper();
    return *reaper;
  }

  void watch(pid_t group) { say("watch " + std::to_string(group)); }
  // The group has ended; its id may be reused, so it must not be killed.
  void forget(pid_t group) { say("forget " + std::to_string(group)); }
  // Clear the directory at `path` if this process dies first; spare it
  // once it is gone or kept. A name with a newline is not told (it would
  // read as two): such a directory is left as before.
  void clear(const std::string& path) {
    if (path.find('\n') == std::string::npos) say("clear " + path);
  }
  void spare(const std::string& path) {
    if (path.find('\n') == std::string::npos) say("spare " + path);
  }

 private:
  // Best effort: a reaper that is gone cannot be helped, and must not take
  // the launcher with it (MSG_NOSIGNAL: no SIGPIPE).
  void say(const std::string& line) {
    std::string text = line + "\n";
    ::send(to_reaper_, text.data(), text.size(), MSG_NOSIGNAL);
  }

  int to_reaper_ = -1;
};

// Waits for `pid`, the leader of its own process group (spawn's child), to
// end; kills what it left in its group while the group's id cannot be
// reused (the leader is reaped only after); returns its wait status.
inline int reap_with_group(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
         errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);
  group_reaper::of_this_process().forget(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// How a child ended, in words for the launch's summary.
inline std::string describe_status(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return std::string("killed by signal ") +
           (name ? std::string("SIG") + name : std::to_string(WTERMSIG(status)));
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace lp::detail
