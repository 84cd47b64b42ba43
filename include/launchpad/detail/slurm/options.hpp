#pragma once

// --lp_launch=slurm's own flags (docs/slurm.md): the --lp_slurm_* rows, and
// the options they fill, read and checked here; the launch's shared flags
// are detail/cli/flags.hpp's.

#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/slurm.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp {
class program;
}

namespace lp::detail {

struct slurm_options {
  std::string partition;
  std::string time;
  std::string account;
  std::vector<std::string> sbatch;  // each an sbatch option
  std::string dir = "lp-slurm";     // shared with the compute hosts
  std::string host = "auto";        // address, interface or auto
  bool detach = false;
};

// A value that goes into a batch script line: one line, nothing a shell
// would expand there.
inline std::string script_safe(std::string_view flag, std::string value) {
  if (value.empty() || value.find_first_of("\n\r'") != std::string::npos)
    throw usage_error(std::string(flag) + " needs a value on one line, without quotes");
  return value;
}

inline constexpr flag_row<slurm_options> slurm_flag_rows[] = {
    {.name = "--lp_slurm_partition",
     .hint = "<p>",
     .example = "gpu",
     .help = "slurm: the job's partition (default: the cluster's default partition)",
     .set = [](slurm_options& f, std::string_view name,
               std::string v) { f.partition = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_time",
     .hint = "<limit>",
     .example = "2:00:00",
     .help = "slurm: the job's time limit, in Slurm's format (30, 2:00:00, 1-0)",
     .set = [](slurm_options& f, std::string_view name,
               std::string v) { f.time = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_account",
     .hint = "<a>",
     .example = "my_project",
     .help = "slurm: the account the job is charged to",
     .set = [](slurm_options& f, std::string_view name,
               std::string v) { f.account = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_sbatch",
     .hint = "<option>",
     .example = "--qos=high",
     .help = "slurm: one more sbatch option, e.g. --qos=high (repeat the flag for more)",
     .set =
         [](slurm_options& f, std::string_view name, std::string v) {
           auto option = script_safe(name, std::move(v));
           if (!option.starts_with("--"))
             throw usage_error(
                 "--lp_slurm_sbatch=" + option +
                 ": give one sbatch option, e.g. --lp_slurm_sbatch=--qos=high");
           f.sbatch.push_back(std::move(option));
         }},
    {.name = "--lp_slurm_dir",
     .hint = "<dir>",
     .example = "/shared/lp-slurm",
     .help = "slurm: where run directories go; the compute hosts must see it at the same "
             "path (default: ./lp-slurm)",
     .set = [](slurm_options& f, std::string_view name,
               std::string v) { f.dir = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_host",
     .hint = "<h>",
     .example = "ib0",
     .help = "slurm: the address nodes listen on: auto (the host's own, the default), an "
             "interface (ib0) or an address",
     .set = [](slurm_options& f, std::string_view name,
               std::string v) { f.host = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_detach",
     .help = "slurm: submit, print the job id and return",
     .on = [](slurm_options& f) -> bool& { return f.detach; }},
};

// slurm: the submitter, the job's supervisor, and each job step's node
// process, which serves on --lp_slurm_host and leads a process group of
// its own (nothing else ends what it starts). Its run and run_node are
// slurm/launch.hpp's.
template <>
struct launcher<slurm> {
  using options = slurm_options;
  static constexpr flag_table<slurm_options> flag_rows{slurm_flag_rows};
  static constexpr bool dry_run = true;
  static constexpr bool on_this_host = false;
  static int run(const program& graph, transport_kind transport,
                 const launch_flags& flags, const slurm_options& job);
  static int run_node(const program& graph, transport_kind transport,
                      const launch_flags& flags, const slurm_options& job);
};

}  // namespace lp::detail
