#pragma once

// Inside a Slurm job: the batch script runs the program as the supervisor,
// which does what local_mp's launcher does (rendezvous, restarts, ordered
// stop, failure summary), with each process of the program a job step.

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/process/host_address.hpp>
#include <launchpad/detail/process/launcher.hpp>
#include <launchpad/detail/process/process_options.hpp>
#include <launchpad/detail/process/run_tool.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/slurm/script.hpp>
#include <launchpad/detail/slurm/tools.hpp>
#include <launchpad/detail/util/text.hpp>
#include <map>
#include <string>
#include <thread>

namespace lp::detail {

// Runs each process as a step of the job `job`, through srun. Its calls all
// come from the launch's one supervising thread.
inline unit_runner srun_runner(const program& graph, const std::string& job) {
  unit_runner runner;
  auto srun = find_program("srun");
  for (const auto& u : plan_units(graph))
    runner.commands_before.emplace(u.name, srun_before(srun, u));
  // Never a signal to srun itself: on SIGTERM it kills its step's tasks at
  // once, with no time to stop. scancel signals the step's tasks.
  runner.signal = [job, scancel = find_program("scancel")](const std::string& unit,
                                                           pid_t pid, int signal) {
    // A step shows in squeue a moment after its srun starts.
    std::string step;
    for (int attempt = 0; attempt < 10 && step.empty(); ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto steps =
          try_tool({"squeue", "--noheader", "--steps", "--jobs=" + job, "--format=%i|%j"},
                   std::chrono::seconds(20));
      for (auto row : split(steps.text, '\n')) {
        auto fields = split(row, '|');
        if (fields.size() == 2 && trim(fields[1]) == unit) step = trim(fields[0]);
      }
    }
    if (step.empty()) {
      // srun still waits for its step: no task runs that could stop in order.
      ::kill(-pid, SIGKILL);
      return;
    }
    // The nodes stop in order on SIGINT as on SIGTERM; slurmstepd notes a
    // SIGTERM in the node's log as a cancelled step, which this was not.
    try_tool({scancel, signal == SIGKILL ? "--signal=KILL" : "--signal=INT", step},
             std::chrono::seconds(20));
  };
  // srun exits with 128 + the signal that killed its task: read back as
  // that signal, the summary names it, and a task that the stop's SIGINT
  // ended counts as under local_mp, as a clean end (it can land just after
  // the node stopped by itself, its handlers gone, on hearing that the
  // program stops).
  runner.task_status = [](int status) {
    if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 32)
      return WEXITSTATUS(status) -
             128;  // the wait status of a death by that signal (Linux)
    return status;
  };
  return runner;
}

inline int run_slurm_supervisor(const program& graph, const launch_settings& settings,
                                process_options options, const std::string& run_dir) {
  int status = 1;
  try {
    const char* job = std::getenv("SLURM_JOB_ID");
    if (!job)
      throw launch_error(std::string(slurm_run_dir_env) +
                         " is set, but this is not a Slurm job (no SLURM_JOB_ID)");
    options.process.terminal = terminal_kind::files;
    options.process.log_dir = run_directory::logs_in(run_dir);
    options.run_dir = run_dir;
    options.bind_host = slurm_host_address(settings.slurm.host);
    options.runner = srun_runner(graph, job);
    process_launch launch(graph, std::move(options));
    status = launch.wait_stopping_on_signals() ? 0 : 1;
    std::cerr << launch.summary() << std::flush;
    linger(launch.status_page(), settings.status.linger_secs);
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
  }
  // The submitting command, or whoever looks later, reads how it ended here.
  // Written last, after every log, and whole (renamed into place): its
  // appearance tells the submitter that the job's output is complete.
  std::ofstream(run_dir + "/result.part") << status << "\n";
  std::rename((run_dir + "/result.part").c_str(), (run_dir + "/result").c_str());
  return status;
}

}  // namespace lp::detail
