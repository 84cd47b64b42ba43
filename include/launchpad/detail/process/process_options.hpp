#pragma once

// What a launch of processes is asked to run, and how (local_mp, a test's
// test_mp, the Slurm job's supervisor): the nodes' command line, how they
// run, where the launcher listens, and how each process is started and
// signalled.

#include <sys/types.h>

#include <functional>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/launch/policy.hpp>
#include <map>
#include <string>
#include <vector>

namespace lp::detail {

// How a launch starts its units and signals them. Left empty (local_mp), a
// unit is the binary itself, in a process group of its own; the Slurm
// launch runs it as a job step, through srun.
struct unit_runner {
  // The command that each unit named here runs under, its program and
  // arguments following (srun and the step's options): given whole before
  // the launch, as a unit's command never depends on when it starts.
  std::map<std::string, std::vector<std::string>> commands_before;
  // Sends `signal` to what runs `unit`; `pid` is the process started for it.
  std::function<void(const std::string& unit, pid_t pid, int signal)> signal;
  // The wait status of the unit's own task, from that of the process
  // started for it; left empty, the same.
  int (*task_status)(int status) = nullptr;
};

struct process_options {
  policy_kind policy = policy_kind::local_mp;
  std::string executable;  // default: this program
  // The nodes' argv, argv[0] first: written from the launch's settings
  // (cli/command_line.hpp's child_arguments), which every node reads again.
  std::vector<std::string> arguments;
  // How the node processes run, as --lp_terminal, --lp_log_dir (default:
  // logs/ in the run directory), --lp_termination_notice_secs, --lp_insecure
  // and --lp_python say (gpus: see `gpus` below).
  node_process_settings process;
  // The launch's TLS credentials (launch_tls.hpp); empty: plain HTTP. An
  // adopted run directory brings its own.
  tls_credentials tls;
  // Stop once every run() has returned; a test controller leaves that to the
  // test, which may still want to ask the nodes that serve.
  bool stop_when_runs_finish = true;
  std::string run_dir;  // adopt this run directory; default: make one under /tmp
  std::string bind_host = "127.0.0.1";  // where the rendezvous listens
  bool direct_calls = false;            // calls between nodes of one process skip HTTP
  port_or_off status_port;              // the launcher's status page; default: none
  unit_runner runner;
  // Place the processes here (a local launch; Slurm places its own): hand
  // out these GPUs, pin to cores.
  bool place = false;
  std::vector<int> gpus;
};

// What a launcher of node processes takes from the launch's settings; the
// nodes' command line is written from them (the TLS credentials stay
// empty: local_mp decides them, and a Slurm job's supervisor adopts those
// its submitter made).
LP_API process_options process_options_from(const launch_settings& settings,
                                            policy_kind policy, transport_kind transport);

}  // namespace lp::detail
