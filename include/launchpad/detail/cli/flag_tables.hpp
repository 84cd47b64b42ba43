#pragma once

// Every table of --lp_ flags a command line may hold, in --lp_help's order:
// the flags every launch shares, each launch policy's own, then the closing
// ones. A new policy's flags are one more table here.

#include <launchpad/detail/cli/flag_row.hpp>
#include <launchpad/detail/cli/kube_flags.hpp>
#include <launchpad/detail/cli/launch_flags.hpp>
#include <launchpad/detail/cli/slurm_flags.hpp>

namespace lp::detail {

inline constexpr flag_table every_flag_table[] = {launch_flag_rows, slurm_flag_rows,
                                                  kube_flag_rows, closing_flag_rows};

// Whether `row` is one that every launch shares: those are read, and the
// TLS flags checked together, before any policy's own.
inline bool is_shared_flag(const flag_row* row) {
  return flag_table(launch_flag_rows).holds(row) ||
         flag_table(closing_flag_rows).holds(row);
}

}  // namespace lp::detail
