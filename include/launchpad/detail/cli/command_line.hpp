#pragma once

// The command line, read and written: where a launch starts, argv into
// launch_settings; for each process a launch starts, its command line from
// launch_settings. The one place in the library that reads or writes argv
// (docs/concepts.md, "Above the folders").

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <string>
#include <vector>

namespace lp::detail {

// What reading a command line checks beyond each flag's own row.
struct read_checks {
  bool tls_together =
      true;  // the TLS flags go together (--lp_tls_cert needs its key, ...)
};

// Reads a command line (argv[0] first) once, where a launch starts: each
// --lp_ flag by the row that names it (cli/flag_tables.hpp), the flags every
// launch shares first and the TLS flags checked together, then each
// policy's own; every other word is the user's, and so is every word from
// "--" on. Throws usage_error for a --lp_ word that no row names, or a
// value that is missing or that its row refuses.
LP_API launch_settings read_command_line(std::vector<std::string> command,
                                         read_checks checks = {});

// The arguments, after argv[0], of a process that a launch with `settings`
// starts: each flag whose row goes to children (flag_row::to_children) and
// whose value is not its default, as --name or --name=value, then the
// user's own words, unchanged and in their order.
LP_API std::vector<std::string> child_arguments(const launch_settings& settings);

inline constexpr std::size_t help_width = 80;

// The --lp_help text: every row of every table, in order, within help_width
// columns. Written when asked for, not fixed at compile time: every file
// that launches would pay for it.
LP_API std::string flags_help();

}  // namespace lp::detail
