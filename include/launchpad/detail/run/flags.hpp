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
  bool direct_calls = false;              // --lp_direct_calls
  int termination_notice_secs = 10;       // --lp_termination_notice_secs
  std::string terminal = "current";       // --lp_terminal=current|files|tmux
  std::string log_dir;                    // --lp_log_dir
  std::size_t max_body_mb = 256;          // --lp_max_body_mb
  std::string graph;                      // --lp_graph=dot|mermaid
  // --lp_launch=slurm (docs/slurm.md)
  std::string slurm_partition;            // --lp_slurm_partition
  std::string slurm_time;                 // --lp_slurm_time
  std::string slurm_account;              // --lp_slurm_account
  std::vector<std::string> slurm_sbatch;  // --lp_slurm_sbatch, each an sbatch option
  std::string slurm_dir = "lp-slurm";     // --lp_slurm_dir, shared with the compute hosts
  std::string slurm_host = "auto";        // --lp_slurm_host: address, interface or auto
  bool slurm_detach = false;              // --lp_slurm_detach
  bool dry_run = false;                   // --lp_dry_run
  std::vector<std::string> arguments;     // the whole command line, argv[0] first
};

inline constexpr std::string_view flags_help =
    "Launchpad flags (every other argument is left to the program):\n"
    "  --lp_launch=<policy>  how to run the program: test_mt, local_mt, local_mp\n"
    "                        or slurm\n"
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
    "  --lp_direct_calls     calls between nodes of one process skip HTTP\n"
    "                        (arguments are still copied); for fast tests\n"
    "  --lp_insecure         accept calls without the launch's secret (warns)\n"
    "  --lp_graph=<format>   print the program graph (dot or mermaid) and exit\n"
    "  --lp_slurm_partition=<p>, --lp_slurm_time=<limit>, --lp_slurm_account=<a>\n"
    "                        slurm: the job's partition, time limit and account\n"
    "  --lp_slurm_sbatch=<option>\n"
    "                        slurm: one more sbatch option, e.g. --qos=high (repeat\n"
    "                        the flag for more)\n"
    "  --lp_slurm_dir=<dir>  slurm: where run directories go; the compute hosts\n"
    "                        must see it at the same path (default: ./lp-slurm)\n"
    "  --lp_slurm_host=<h>   slurm: the address nodes listen on: auto (the host's\n"
    "                        own), an interface (ib0) or an address\n"
    "  --lp_slurm_detach     slurm: submit, print the job id and return\n"
    "  --lp_dry_run          slurm: print the batch script and each node's command\n"
    "                        line, and submit nothing\n"
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

// A value that goes into a batch script line: one line, nothing a shell
// would expand there.
inline std::string script_safe(std::string_view flag, std::string value) {
  if (value.empty() || value.find_first_of("\n\r'") != std::string::npos)
    throw usage_error(std::string(flag) + " needs a value on one line, without quotes");
  return value;
}

template <class Value>
void parse_slurm_flag(launch_flags& flags, std::string_view name, Value value) {
  if (name == "--lp_slurm_partition") {
    flags.slurm_partition = script_safe(name, value());
  } else if (name == "--lp_slurm_time") {
    flags.slurm_time = script_safe(name, value());
  } else if (name == "--lp_slurm_account") {
    flags.slurm_account = script_safe(name, value());
  } else if (name == "--lp_slurm_sbatch") {
    auto option = script_safe(name, value());
    if (!option.starts_with("--"))
      throw usage_error("--lp_slurm_sbatch=" + option + ": give one sbatch option, e.g. "
                        "--lp_slurm_sbatch=--qos=high");
    flags.slurm_sbatch.push_back(option);
  } else if (name == "--lp_slurm_dir") {
    flags.slurm_dir = script_safe(name, value());
  } else if (name == "--lp_slurm_host") {
    flags.slurm_host = script_safe(name, value());
  } else if (name == "--lp_slurm_detach") {
    flags.slurm_detach = true;
  } else if (name == "--lp_dry_run") {
    flags.dry_run = true;
  } else {
    throw usage_error("unknown flag " + std::string(name) +
                      "; run with --lp_help to list Launchpad's flags");
  }
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
    } else if (name == "--lp_direct_calls") {
      flags.direct_calls = true;
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
    } else if (name.starts_with("--lp_slurm_") || name == "--lp_dry_run") {
      parse_slurm_flag(flags, name, value);
    } else {
      throw usage_error("unknown flag " + std::string(name) +
                        "; run with --lp_help to list Launchpad's flags");
    }
  }
  return flags;
}

}  // namespace lp::detail
