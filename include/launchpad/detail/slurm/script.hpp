#pragma once

// What a Slurm launch asks of Slurm: the batch script of the job, and the
// srun command that runs each process of the program as a job step.

#include <algorithm>
#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/shell_words.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <vector>

namespace lp::detail {

// The run directory of a job, as its batch script tells the in-job
// supervisor.
inline constexpr const char* slurm_run_dir_env = "LP_SLURM_RUN_DIR";

// The job is homogeneous: one task slot per process, each slot as large as
// the largest request in each dimension, so any process fits any slot. Each
// step then asks for exactly its own resources. (Heterogeneous jobs would fit
// tighter, but Slurm 22.05 does not let their components share a node.)
struct slurm_slots {
  std::size_t count = 0;
  int cpus = 1;
  long memory_mb = 0;  // 0: nobody asked; the partition's default applies
  int gpus = 0;
};

inline slurm_slots slurm_slots_for(const std::vector<unit_plan>& units) {
  slurm_slots slots;
  slots.count = units.size();
  for (const auto& u : units) {
    slots.cpus = std::max(slots.cpus, u.settings.resources.cpus);
    slots.memory_mb = std::max(slots.memory_mb, u.settings.resources.memory_mb);
    slots.gpus = std::max(slots.gpus, u.settings.resources.gpus);
  }
  return slots;
}

// srun's options for one process's job step. -N1 always: a step without it
// waits for nodes that the other steps hold. --exact: only what the step
// asks, so the other steps fit beside it.
inline std::vector<std::string> srun_options(const unit_plan& u) {
  const auto& needs = u.settings.resources;
  std::vector<std::string> options{
      "--nodes=1",    "--ntasks=1",
      "--exact",      "--job-name=" + u.name,
      "--export=ALL", "--cpus-per-task=" + std::to_string(needs.cpus)};
  if (needs.memory_mb > 0)
    options.push_back("--mem=" + std::to_string(needs.memory_mb) + "M");
  if (needs.gpus > 0) options.push_back("--gres=gpu:" + std::to_string(needs.gpus));
  return options;
}

// What runs a process as its job step: srun and its options, before the
// program and the arguments it was launched with.
inline std::vector<std::string> srun_before(const std::string& srun, const unit_plan& u) {
  std::vector<std::string> command{srun};
  for (auto& option : srun_options(u)) command.push_back(std::move(option));
  return command;
}

// The command line the job runs, argv[0] first: written from the
// submitter's settings as for any process a launch starts, so without the
// flags that tell only the submitter what to do (--lp_dry_run,
// --lp_slurm_detach: their rows do not go to children).
inline std::vector<std::string> job_arguments(const launch_settings& settings) {
  std::vector<std::string> words{settings.command.empty() ? ""
                                                          : settings.command.front()};
  for (auto& word : child_arguments(settings)) words.push_back(std::move(word));
  return words;
}

inline std::string slurm_batch_script(const program& graph,
                                      const launch_settings& settings,
                                      const slurm_slots& slots,
                                      const std::string& run_dir,
                                      const std::string& executable) {
  const auto& job = settings.slurm;
  std::string script = "#!/bin/sh\n";
  auto line = [&](const std::string& option) { script += "#SBATCH " + option + "\n"; };
  line("--job-name=lp-" + graph.name());
  line("--output=" + run_dir + "/job.log");
  line("--ntasks=" + std::to_string(slots.count));
  line("--cpus-per-task=" + std::to_string(slots.cpus));
  if (slots.memory_mb > 0)
    line("--mem-per-cpu=" +
         std::to_string((slots.memory_mb + slots.cpus - 1) / slots.cpus) + "M");
  if (slots.gpus > 0) line("--gpus-per-task=" + std::to_string(slots.gpus));
  if (!job.partition.empty()) line("--partition=" + job.partition);
  if (!job.time.empty()) line("--time=" + job.time);
  if (!job.account.empty()) line("--account=" + job.account);
  // Before the time limit, Slurm signals every process of the job, and srun
  // kills its step at once on SIGTERM; warned first, the supervisor stops
  // the nodes in order.
  line("--signal=B:TERM@" +
       std::to_string(settings.process.termination_notice_secs + 30));
  for (const auto& option : job.sbatch) line(option);
  script +=
      "\n# Launchpad's in-job supervisor: it keeps the rendezvous, starts each process\n"
      "# of the program as a job step (srun), restarts and stops them, and writes\n"
      "# how the program ended to " +
      run_dir + "/result.\n";
  script += std::string(slurm_run_dir_env) + "=" + shell_quote(run_dir) + "\n";
  script += "export " + std::string(slurm_run_dir_env) + "\n";
  script += "exec " + shell_quote(executable);
  auto arguments = job_arguments(settings);
  for (std::size_t i = 1; i < arguments.size(); ++i)
    script += " " + shell_quote(arguments[i]);
  return script + "\n";
}

}  // namespace lp::detail
