#pragma once

// What a launch is told, as plain values: its nodes' server limits, TLS,
// checkpoints, the status page, how node processes run, and each launch
// policy's own (Slurm's, Kubernetes'). Launchers and what they run take
// these, never argv: where a launch starts, cli/ reads the command line into
// them, and it writes the command line of each process a launch starts from
// them (cli/command_line.hpp).

#include <cstddef>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// A launch policy, as a launch names it to the processes it starts
// (LP_POLICY), on its status page and to lp::context().
enum class policy_kind { test_mt, local_mt, local_mp, test_mp, slurm, kubernetes };

// Each policy's name: its type's `flag`, in policy_kind's order.
inline constexpr std::string_view policy_names[] = {test_multi_threading::flag,
                                                    local_multi_threading::flag,
                                                    local_multi_processing::flag,
                                                    test_multi_processing::flag,
                                                    slurm::flag,
                                                    kubernetes::flag};

constexpr std::string_view name_of(policy_kind policy) {
  return policy_names[static_cast<std::size_t>(policy)];
}

// The policy of that name, if any.
constexpr std::optional<policy_kind> policy_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(policy_names); ++i)
    if (policy_names[i] == name) return static_cast<policy_kind>(i);
  return std::nullopt;
}

// Where the launcher's status page listens (--lp_status_port): on a port of
// 127.0.0.1, 0 for any free one, or nowhere.
struct port_or_off {
  std::optional<int> number;  // empty: off
  friend bool operator==(const port_or_off&, const port_or_off&) = default;
};

// The limits of every node's server (docs/protocol.md, "Limits").
struct server_settings {
  std::size_t max_body_mb = 256;
  server_limits limits;  // its defaults are the flags'
};

// TLS between nodes (docs/protocol.md, "Encryption"): on, off, or auto (on
// where nodes serve beyond loopback); a site's own files, if given.
enum class tls_mode { on, off, automatic };
struct tls_settings {
  tls_mode mode = tls_mode::automatic;
  std::string ca, cert, key;
};

// docs/launching.md, "Fault tolerance".
struct checkpoint_settings {
  std::string dir;     // empty: checkpoint_dir_of (checkpoints.hpp) says
  std::string resume;  // a checkpoint directory of an earlier launch
};

// The launcher's status page (docs/observability.md).
struct status_settings {
  port_or_off port{0};
  int linger_secs = 0;
  std::string of;     // --lp_status=RUN_DIR: print that launch's status and exit
  bool json = false;  // ... as JSON
};

// How this host's processes that host nodes are run.
struct node_process_settings {
  bool insecure = false;
  bool system_malloc = false;  // leave malloc as it is (util/malloc_tuning.hpp)
  // Callers on the nodes' host reach them over unix sockets in the run
  // directory (wire/local_socket.hpp); off: TCP alone.
  bool same_host = true;
  int termination_notice_secs = 10;
  terminal_kind terminal = terminal_kind::current;
  std::string log_dir;             // empty: logs/ in the run directory
  std::string python = "python3";  // the Python nodes' interpreter (docs/python_nodes.md)
  std::string gpus;                // "0,1,2,3"; empty: the devices found
};

// Calls between processes of one host (docs/launching.md, "On one host").
struct same_host_settings {
  // The most MiB of shared-memory segments a process holds at once
  // (wire/shared_memory.hpp, segment_pool); past it a call's arrays go
  // through the socket, counted. 0: none, every array goes through it.
  std::size_t shared_memory_mb = 256;
};

// A Slurm launch's own (docs/slurm.md).
struct slurm_settings {
  std::string partition;
  std::string time;
  std::string account;
  std::vector<std::string> sbatch;  // each an sbatch option
  std::string dir = "lp-slurm";     // shared with the compute hosts
  std::string host = "auto";        // address, interface or auto
  bool detach = false;
};

// A Kubernetes launch's own (docs/kubernetes.md).
struct kube_settings {
  std::string image;  // required to write manifests
  std::string kube_namespace = "default";
  std::string binary;           // empty: /usr/local/bin/ and argv[0]'s file name
  std::string dir = "lp-kube";  // where --lp_dry_run writes the manifests
};

struct launch_settings {
  std::optional<policy_kind> launch;  // unset: the policy main() names
  bool help = false;
  std::string graph;  // empty: launch, draw nothing
  // Show what a cluster launch would submit, and submit nothing: a choice of
  // the launch, not of one cluster's (slurm and kubernetes read it).
  bool dry_run = false;
  node_process_settings process;
  server_settings server;
  same_host_settings same_host;
  tls_settings tls;
  checkpoint_settings checkpoints;
  status_settings status;
  slurm_settings slurm;
  kube_settings kube;
  // The user's own words of the command line, in their order: every word no
  // --lp_ flag read, and every word from "--" on. Each process a launch
  // starts gets them unchanged.
  std::vector<std::string> user_arguments;
  // The command line as typed, argv[0] first: what the user ran, for the
  // messages that show it back (how to resume). A started process's command
  // line is written from the settings above, never edited from this.
  std::vector<std::string> command;
};

}  // namespace lp::detail
