#pragma once

// --lp_launch=slurm's own flags (docs/slurm.md): the --lp_slurm_* rows, which
// read and check launch_settings::slurm.

#include <launchpad/detail/cli/flag_row.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// A value that goes into a batch script line: one line, nothing a shell
// would expand there.
inline std::string script_safe(std::string_view flag, std::string value) {
  if (value.empty() || value.find_first_of("\n\r'") != std::string::npos)
    throw usage_error(std::string(flag) + " needs a value on one line, without quotes");
  return value;
}

inline constexpr flag_row slurm_flag_rows[] = {
    {.name = "--lp_slurm_partition",
     .hint = "<p>",
     .example = "gpu",
     .help = "slurm: the job's partition (default: the cluster's default partition)",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.slurm.partition = script_safe(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.slurm.partition}; }},
    {.name = "--lp_slurm_time",
     .hint = "<limit>",
     .example = "2:00:00",
     .help = "slurm: the job's time limit, in Slurm's format (30, 2:00:00, 1-0)",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.slurm.time = script_safe(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.slurm.time}; }},
    {.name = "--lp_slurm_account",
     .hint = "<a>",
     .example = "my_project",
     .help = "slurm: the account the job is charged to",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.slurm.account = script_safe(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.slurm.account}; }},
    {.name = "--lp_slurm_sbatch",
     .hint = "<option>",
     .example = "--qos=high",
     .help = "slurm: one more sbatch option, e.g. --qos=high (repeat the flag for more)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           auto option = script_safe(name, std::move(v));
           if (!option.starts_with("--"))
             throw usage_error(
                 "--lp_slurm_sbatch=" + option +
                 ": give one sbatch option, e.g. --lp_slurm_sbatch=--qos=high");
           s.slurm.sbatch.push_back(std::move(option));
         },
     .get = [](const launch_settings& s) { return s.slurm.sbatch; }},
    {.name = "--lp_slurm_dir",
     .hint = "<dir>",
     .example = "/shared/lp-slurm",
     .help = "slurm: where run directories go; the compute hosts must see it at the same "
             "path (default: ./lp-slurm)",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.slurm.dir = script_safe(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.slurm.dir}; }},
    {.name = "--lp_slurm_host",
     .hint = "<h>",
     .example = "ib0",
     .help = "slurm: the address nodes listen on: auto (the host's own, the default), an "
             "interface (ib0) or an address",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.slurm.host = script_safe(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.slurm.host}; }},
    {.name = "--lp_slurm_detach",
     .help = "slurm: submit, print the job id and return",
     .to_children = false,
     .on = [](launch_settings& s) -> bool& { return s.slurm.detach; }},
};

}  // namespace lp::detail
