#pragma once

#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace lp::detail {

// The --lp_* flags of a launch. Every other argument belongs to the user and
// is left alone.
struct launch_flags {
  std::optional<std::string> launch;  // --lp_launch=<policy>
  bool help = false;                  // --lp_help
};

inline constexpr std::string_view flags_help =
    "Launchpad flags (every other argument is left to the program):\n"
    "  --lp_launch=<policy>  how to run the program: test_mt or local_mt\n"
    "                        (default: the policy main() names, else local_mt)\n"
    "  --lp_help             print this help and exit\n";

inline launch_flags parse_flags(int argc, char** argv) {
  launch_flags flags;
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
    } else {
      throw usage_error("unknown flag " + std::string(name) +
                        "; run with --lp_help to list Launchpad's flags");
    }
  }
  return flags;
}

}  // namespace lp::detail
