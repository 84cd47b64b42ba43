#pragma once

// --lp_terminal=tmux: a tmux session with a window per node process, each
// following the process's log. The launcher keeps the processes themselves,
// so it still sees how each ends.

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <launchpad/detail/process/run_tool.hpp>
#include <launchpad/detail/util/shell_words.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <utility>
#include <vector>

namespace lp::detail {

class tmux_session {
 public:
  // A tmux command that takes longer has a tmux server that does not answer.
  static constexpr std::chrono::seconds tool_limit{10};

  tmux_session() = default;
  tmux_session(const tmux_session&) = delete;
  tmux_session& operator=(const tmux_session&) = delete;
  ~tmux_session() { close(); }

  // Opens the detached session `name` with a window per process, named as
  // the process, following its log (a {name, log path} each); throws
  // lp::launch_error if tmux cannot.
  void open(const std::string& name,
            const std::vector<std::pair<std::string, std::string>>& windows) {
    name_ = name;
    bool first = true;
    for (const auto& [window, log] : windows) {
      // --pid: the window closes when the launcher dies, however it dies,
      // and tmux ends with its last window.
      std::string follow =
          "tail -n +1 -F --pid=" + std::to_string(::getpid()) + " " + shell_quote(log);
      std::vector<std::string> command =
          first ? std::vector<std::string>{"tmux", "new-session", "-d",   "-s",
                                           name_,  "-n",          window, follow}
                : std::vector<std::string>{"tmux",      "new-window", "-d",   "-t",
                                           "=" + name_, "-n",         window, follow};
      if (run_tool(command, tool_limit).status != 0)
        throw launch_error(
            "tmux could not open a window for " + window +
            "; is tmux installed? (--lp_terminal=files writes the same logs)");
      first = false;
    }
    std::cerr << "[lp] every node has a tmux window: tmux attach -t " << name_
              << std::endl;
  }

  // Ends the session, if one is open, and its windows; the processes are
  // not its.
  void close() {
    if (name_.empty()) return;
    // "=": this session exactly; a bare name also matches longer ones by prefix.
    try_tool({"tmux", "kill-session", "-t", "=" + name_}, tool_limit);
    name_.clear();
  }

 private:
  std::string name_;  // of the open session; empty: none
};

}  // namespace lp::detail
