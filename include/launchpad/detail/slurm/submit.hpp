#pragma once

// The command a user runs on a login host: it submits the program as one
// Slurm job, then follows the job (its state, its logs) to its end, and
// cancels it on Ctrl+C.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/process/run_tool.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/slurm/follow.hpp>
#include <launchpad/detail/slurm/partition.hpp>
#include <launchpad/detail/slurm/script.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <thread>

namespace lp::detail {

inline void print_dry_run(const program& graph, const launch_settings& settings,
                          std::ostream& out) {
  const auto& job = settings.slurm;
  auto units = plan_units(graph);
  auto run_dir =
      (std::filesystem::absolute(job.dir) / ("lp-" + graph.name() + "-XXXXXX")).string();
  auto executable = this_executable();
  out << "# --lp_dry_run: nothing is submitted. The batch script, " << run_dir
      << "/job.sh:\n"
      << slurm_batch_script(graph, settings, slurm_slots_for(units), run_dir, executable)
      << "\n# The job step of each process, started by the supervisor in the job, with\n"
         "# LP_NODES (its labels), LP_RENDEZVOUS and LP_RUN_DIR in its environment (the\n"
         "# secret and the TLS credentials it reads from the run directory, never from "
         "its\n"
         "# environment, which srun sends in the clear); its output goes to\n"
         "# "
      << run_directory::logs_in(run_dir) << "/<label>.log:\n";
  auto arguments = job_arguments(settings);
  for (const auto& u : units) {
    out << u.name << ":";
    for (const auto& word : srun_before("srun", u)) out << " " << shell_quote(word);
    out << " " << shell_quote(executable);
    for (std::size_t i = 1; i < arguments.size(); ++i)
      out << " " << shell_quote(arguments[i]);
    out << "\n";
  }
}

// One line of squeue about the job; state is empty once Slurm forgot it.
struct job_state {
  std::string state, reason, nodes;
  bool ended() const {
    if (state.empty()) return true;
    for (const char* final :
         {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
          "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED"})
      if (state == final) return true;
    return false;
  }
};

inline job_state query_job(const std::string& job) {
  auto listed = try_tool(
      {"squeue", "--noheader", "--jobs=" + job, "--states=all", "--format=%T|%r|%N"},
      std::chrono::seconds(20));
  job_state now;
  auto fields = split(trim(listed.text), '|');
  if (listed.status == 0 && fields.size() == 3) {
    now.state = fields[0];
    now.reason = fields[1];
    now.nodes = fields[2];
  } else if (listed.status != 0 &&
             listed.text.find("Invalid job id") == std::string::npos) {
    now.state = "UNKNOWN";  // squeue failed for a while: ask again
  }
  return now;
}

class slurm_submission {
 public:
  slurm_submission(const program& graph, const launch_settings& settings)
      : graph_(graph),
        settings_(settings),
        slurm_(settings.slurm),
        units_(plan_units(graph)) {}

  int run() {
    auto parent = std::filesystem::absolute(slurm_.dir).string();
    if (parent.find_first_of(" \t") != std::string::npos)
      throw usage_error(
          "--lp_slurm_dir=" + slurm_.dir + ": the path " + parent +
          " holds a space, which #SBATCH lines cannot; choose another directory");
    check_fits(units_, find_partition(slurm_.partition));
    std::filesystem::create_directories(parent);
    // The nodes serve on the compute hosts' network: TLS unless --lp_tls=off.
    run_directory dir(graph_.name(), settings_.process.insecure ? "" : make_secret(),
                      parent, launch_tls(settings_.tls, graph_.name(), true));
    dir.announce(std::cerr);
    // From before the job exists: a Ctrl+C during sbatch must still cancel it.
    stop_on_signals handler(
        [this](int signal) {
          last_signal_ = signal;
          ++signals_;
        },
        [this](int) { ++signals_; });
    std::string job;
    try {
      job = submit(dir.path());
    } catch (...) {
      std::filesystem::remove(dir.path() + "/job.sh");
      throw;
    }
    dir.keep();  // the job reads the secret and credentials, and removes them when it ends
    std::cerr << "[lp] submitted job " << job << "; its supervisor's output is in "
              << dir.path() << "/job.log, node logs in "
              << run_directory::logs_in(dir.path()) << std::endl;
    if (slurm_.detach && signals_ == 0) {  // else follow, which cancels it
      std::cerr << "[lp] follow it with: squeue --jobs=" << job
                << "; stop it in order with: scancel --batch --signal=TERM " << job
                << std::endl;
      std::cout << job << std::endl;
      return 0;
    }
    int status = follow(job, dir.path());
    // Gone already, unless the job never ran.
    for (const char* file :
         {protocol::run_directory::secret, run_directory::certificate_file,
          run_directory::key_file, run_directory::authority_file})
      ::unlink((dir.path() + "/" + file).c_str());
    tell_how_to_resume(graph_, checkpoint_dir_of(settings_.checkpoints, dir.path()),
                       settings_.command, std::cerr);
    return status;
  }

 private:
  std::string submit(const std::string& run_dir) {
    auto script_path = run_dir + "/job.sh";
    {
      std::ofstream script(script_path);
      script << slurm_batch_script(graph_, settings_, slurm_slots_for(units_), run_dir,
                                   this_executable());
      if (!script) throw launch_error("cannot write " + script_path);
    }
    ::chmod(script_path.c_str(), 0700);
    auto submitted =
        run_tool({"sbatch", "--parsable", script_path}, std::chrono::seconds(60));
    std::string job(
        trim(std::string_view(submitted.text).substr(0, submitted.text.find(';'))));
    if (submitted.status != 0 || job.empty() ||
        job.find_first_not_of("0123456789") != std::string::npos)
      throw launch_error("sbatch refused the job: " + std::string(trim(submitted.text)) +
                         " (the batch script is " + script_path + ")");
    return job;
  }

  // Follows the job to its end; returns the program's exit status.
  int follow(const std::string& job, const std::string& run_dir) {
    using clock = std::chrono::steady_clock;
    log_follower logs;
    for (const auto& u : units_) {
      std::string file = u.name;
      std::replace(file.begin(), file.end(), '/', '_');
      logs.follow(run_directory::logs_in(run_dir) + "/" + file + ".log",
                  "[" + u.name + "] ", std::cout);
    }
    // Last: a failure summary there comes after the lines it quotes.
    logs.follow(run_dir + "/job.log", "", std::cerr);
    int acted_on = 0;
    std::optional<clock::time_point> give_up_at;  // of the orderly stop
    bool cancelled_hard = false;
    std::optional<clock::time_point> forget_at;  // of a job that will not end
    // Since when the job has been completing with its result written; the
    // epoch while it is not (an optional here trips g++ 12's
    // -Wmaybe-uninitialized at -O3).
    clock::time_point completing_since{};
    job_state last;
    for (;;) {
      auto now = query_job(job);
      logs.poll();
      if (now.state != last.state || now.reason != last.reason) report(job, now);
      last = now;
      if (now.ended()) break;
      // A job completes once every host of it has ended its steps. A host
      // cut off the network hears of it only when it is back, or Slurm marks
      // it down: the program ended when the supervisor said how.
      if (now.state != "COMPLETING" || !std::filesystem::exists(run_dir + "/result")) {
        completing_since = {};
      } else if (completing_since == clock::time_point{}) {
        completing_since = clock::now();
      } else if (clock::now() - completing_since > std::chrono::seconds(10)) {
        std::cerr
            << "[lp] job " << job << " is still completing, 10 s after its supervisor "
            << "ended: a host of it does not answer Slurm (see sinfo), and ends its "
               "steps when it does"
            << std::endl;
        break;
      }
      if (now.state == "PENDING" && hopeless(now.reason)) {
        try_tool({"scancel", job}, std::chrono::seconds(60));
        std::cerr << "[lp] job " << job << " can never start (" << now.reason
                  << "); it was cancelled. Check --lp_slurm_partition, --lp_slurm_time, "
                     "--lp_slurm_account and the groups' resources()"
                  << std::endl;
        return 1;
      }
      int seen = signals_;
      if (seen >= 1 && acted_on == 0) {
        acted_on = 1;
        std::cerr << "[lp] " << (last_signal_ == SIGTERM ? "SIGTERM" : "SIGINT")
                  << ": stopping job " << job << " (again to cancel it at once)"
                  << std::endl;
        if (now.state == "PENDING") {
          try_tool({"scancel", job}, std::chrono::seconds(60));
        } else {
          // To the supervisor only: it stops the nodes in order. A plain
          // scancel would also signal each srun, which kills its step at once.
          try_tool({"scancel", "--batch", "--signal=TERM", job},
                   std::chrono::seconds(60));
          give_up_at = clock::now() + std::chrono::seconds(
                                          settings_.process.termination_notice_secs + 30);
        }
      }
      if (!cancelled_hard &&
          ((seen >= 2) || (give_up_at && clock::now() > *give_up_at))) {
        cancelled_hard = true;
        std::cerr << "[lp] cancelling job " << job << " at once" << std::endl;
        cancel_at_once(job);
        forget_at = clock::now() + std::chrono::seconds(120);
      }
      if (forget_at && clock::now() > *forget_at) {
        std::cerr << "[lp] job " << job << " was cancelled but is still " << now.state
                  << "; see squeue --jobs=" << job << std::endl;
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    // The supervisor writes `result` after its last words; on a shared
    // directory they may reach this host a little after the job's end. A job
    // killed before its supervisor could write it leaves none: then wait no
    // longer than a shared file system may lag, or than it takes to see that
    // a job cancelled at once wrote nothing.
    auto lag_ends = clock::now() + std::chrono::seconds(cancelled_hard ? 1 : 10);
    while (!std::filesystem::exists(run_dir + "/result") && clock::now() < lag_ends)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    logs.poll(true);
    int status = -1;
    std::ifstream(run_dir + "/result") >> status;
    if (status == 0 && !cancelled_hard) return 0;
    if (status < 0)
      std::cerr << "[lp] job " << job << " ended ("
                << (last.state.empty() ? "gone" : last.state)
                << ") before its supervisor could say how the program ended; see "
                << run_dir << "/job.log" << std::endl;
    return 1;
  }

  // Kills the nodes' steps, then cancels the job. A cancel alone gives every
  // process Slurm's KillWait to stop: a node takes the cancel's SIGTERM as
  // the program's stop, and one stopping already keeps on stopping. The
  // batch step is spared, so that the supervisor still says how it ended.
  static void cancel_at_once(const std::string& job) {
    auto steps =
        try_tool({"squeue", "--noheader", "--steps", "--jobs=" + job, "--format=%i"},
                 std::chrono::seconds(20));
    std::vector<std::string> kill{"scancel", "--signal=KILL"};
    for (auto row : split(steps.text, '\n')) {
      auto step = trim(row);
      if (!step.starts_with(job + ".")) continue;
      auto number = step.substr(job.size() + 1);  // not "batch"
      if (!number.empty() && number.find_first_not_of("0123456789") == std::string::npos)
        kill.emplace_back(step);
    }
    if (kill.size() > 2) try_tool(kill, std::chrono::seconds(20));
    try_tool({"scancel", job}, std::chrono::seconds(60));
  }

  static void report(const std::string& job, const job_state& now) {
    if (now.state == "PENDING")
      std::cerr << "[lp] job " << job << " is pending"
                << (now.reason == "None" ? "" : " (" + now.reason + ")") << std::endl;
    else if (now.state == "RUNNING")
      std::cerr << "[lp] job " << job << " runs on " << now.nodes << std::endl;
    else if (!now.state.empty() && now.state != "UNKNOWN")
      std::cerr << "[lp] job " << job << " is " << now.state << std::endl;
  }

  const program& graph_;
  const launch_settings& settings_;
  const slurm_settings& slurm_;
  std::vector<unit_plan> units_;
  std::atomic<int> signals_{0};
  std::atomic<int> last_signal_{SIGINT};
};

}  // namespace lp::detail
