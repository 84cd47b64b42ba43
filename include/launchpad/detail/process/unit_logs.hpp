#pragma once

// Where the output of a launch's processes goes (--lp_terminal): this
// terminal, each line behind its process's name (current), or a log file per
// process (files), each also followed in a tmux window (tmux); and the last
// lines of each, for the status page and a failure's summary.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/process/log_tail.hpp>
#include <launchpad/detail/process/tmux.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

class unit_logs {
 public:
  // `dir`: the log directory (--lp_log_dir); empty: logs/ in `run_dir`.
  unit_logs(terminal_kind terminal, const std::string& dir, const std::string& run_dir)
      : terminal_(terminal), dir_(dir.empty() ? run_directory::logs_in(run_dir) : dir) {}

  // Makes the log directory, if the output goes to files, and says where.
  void make_dir() const {
    if (!to_files()) return;
    ::mkdir(dir_.c_str(), 0700);
    std::cerr << "[lp] node logs in " << dir_ << std::endl;
  }

  bool to_files() const { return terminal_ != terminal_kind::current; }

  // The descriptors that a process's stdout and stderr (the same one for a
  // log file) are to be, for its start; the caller closes them after.
  std::pair<int, int> open(const std::string& unit) {
    if (!to_files()) return {output_.open(unit, 1), output_.open(unit, 2)};
    auto path = path_of(unit);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) throw launch_error("cannot open the log file " + path);
    return {fd, fd};
  }

  // A process's last lines, from its log or from its pipes, which are
  // waited for up to `drain` while something still holds them open.
  std::vector<std::string> last_lines(const std::string& unit,
                                      std::chrono::milliseconds drain = {}) {
    if (to_files()) return log_tail(path_of(unit));
    return output_.last_lines(unit, drain);
  }

  // With --lp_terminal=tmux, a tmux window following each process's log,
  // once all are started; `session` names them.
  void follow(const std::string& session, const std::vector<std::string>& units) {
    if (terminal_ != terminal_kind::tmux) return;
    std::vector<std::pair<std::string, std::string>> windows;
    for (const auto& unit : units) windows.emplace_back(unit, path_of(unit));
    tmux_.open(session, windows);
  }
  void stop_following() { tmux_.close(); }

  // Once no process is left to write: the pipes' readers end.
  void close() { output_.close(); }

 private:
  std::string path_of(std::string unit) const {
    std::replace(unit.begin(), unit.end(), '/', '_');
    return dir_ + "/" + unit + ".log";
  }

  terminal_kind terminal_;
  std::string dir_;
  output_pump output_;
  tmux_session tmux_;
};

}  // namespace lp::detail
