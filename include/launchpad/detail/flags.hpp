#pragma once

#include <cstddef>
#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <stdexcept>
#include <vector>

namespace lp::detail {

// The --lp_* flags of a launch. Every other argument belongs to the user and
// is left alone.
struct launch_flags {
  std::optional<std::string> launch;      // --lp_launch=<policy>
  bool help = false;                      // --lp_help
  bool insecure = false;                  // --lp_insecure
  int termination_notice_secs = 10;       // --lp_termination_notice_secs
  std::string terminal = "current";       // --lp_terminal=current|files|tmux
  std::string log_dir;                    // --lp_log_dir
  std::size_t max_body_mb = 256;          // --lp_max_body_mb
  std::string graph;                      // --lp_graph=dot|mermaid
  std::vector<std::string> arguments;     // the whole command line, argv[0] first
};

inline constexpr std::string_view flags_help =
    "Launchpad flags (every other argument is left to the program):\n"
    "  --lp_launch=<policy>  how to run the program: test_mt, local_mt or local_mp\n"
    "                        (default: the policy main() names, else local_mt)\n"
    "  --lp_terminal=<where> local_mp: where node output goes: current (this\n"
    "                        terminal, each line prefixed), files (one log per\n"
    "                        node) or tmux (logs, and a tmux window following each)\n"
    "  --lp_log_dir=<dir>    local_mp with files or tmux: the log directory\n"
    "                        (default: logs/ in the launch's run directory)\n"
    "  --lp_termination_notice_secs=<n>\n"
    "                        local_mp: seconds a node has to stop before it is\n"
    "                        killed (default 10)\n"
    "  --lp_max_body_mb=<n>  the largest request body a node accepts, in MiB;\n"
    "                        larger ones get 413 (default 256)\n"
    "  --lp_insecure         accept calls without the launch's secret (warns)\n"
    "  --lp_graph=<format>   print the program graph (dot or mermaid) and exit\n"
    "  --lp_help             print this help and exit\n";

inline long whole_number(std::string_view flag, const std::string& text, long low, long high) {
  try {
    std::size_t used = 0;
    long number = std::stol(text, &used);
    if (used == text.size() && number >= low && number <= high) return number;
  } catch (const std::exception&) {
  }
  throw usage_error(std::string(flag) + "=" + text + ": give a whole number from " +
                    std::to_string(low) + " to " + std::to_string(high));
}

inline launch_flags parse_flags(int argc, char** argv) {
  launch_flags flags;
  for (int i = 0; i < argc; ++i) flags.arguments.emplace_back(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--lp_")) continue;
    auto equals = arg.find('=');
    auto name = arg.substr(0, equals);
    auto value = [&]() -> std::string {
      if (equals != std::string_view::npos) return std::string(arg.substr(equals + 1));
      if (i + 1 < argc) return argv[++i];
      throw usage_error(std::string(name) + " needs a value, e.g. " + std::string(name) +
                        "=local_mt");
    };
    if (name == "--lp_launch") {
      flags.launch = value();
    } else if (name == "--lp_help") {
      flags.help = true;
    } else if (name == "--lp_insecure") {
      flags.insecure = true;
    } else if (name == "--lp_terminal") {
      flags.terminal = value();
      if (flags.terminal != "current" && flags.terminal != "files" && flags.terminal != "tmux")
        throw usage_error("--lp_terminal=" + flags.terminal + ": choose current, files or tmux");
    } else if (name == "--lp_graph") {
      flags.graph = value();
      if (flags.graph != "dot" && flags.graph != "mermaid")
        throw usage_error("--lp_graph=" + flags.graph + ": choose dot or mermaid");
    } else if (name == "--lp_log_dir") {
      flags.log_dir = value();
    } else if (name == "--lp_termination_notice_secs") {
      flags.termination_notice_secs = static_cast<int>(whole_number(name, value(), 0, 86400));
    } else if (name == "--lp_max_body_mb") {
      flags.max_body_mb = static_cast<std::size_t>(whole_number(name, value(), 1, 1 << 20));
    } else {
      throw usage_error("unknown flag " + std::string(name) +
                        "; run with --lp_help to list Launchpad's flags");
    }
  }
  return flags;
}

}  // namespace lp::detail
