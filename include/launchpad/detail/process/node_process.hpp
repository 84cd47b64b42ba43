#pragma once

// A process that a launch started to host nodes (local_mp's, test_mp's, a
// Slurm job step, a pod): it hosts them where its launcher says.

#include <launchpad/detail/config.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <optional>
#include <string>

namespace lp::detail {

// The value the launcher set in this process's environment, taken out of
// it: the node's own child processes must not take themselves for nodes.
LP_API std::optional<std::string> take_env(const char* name);

// True in a process that a multi-processing launcher started as a node.
LP_API bool is_node_process();

// Where a node process runs, as its policy sees it.
struct node_site {
  // local_mp and test_mp: the launcher is this process's parent, which
  // signals it; elsewhere the launcher is on another host (Slurm) or in
  // another pod (Kubernetes), and every signal comes from elsewhere.
  bool launcher_is_parent = true;
  std::string bind_host = "127.0.0.1";
  std::string advertise_host;  // what the nodes publish; empty: bind_host
  // Lead a process group of its own, and end it with this process: under
  // Slurm nothing else ends what a node starts (in a pod, the container's
  // end does).
  bool own_group = false;
  // Tell the launcher how this process ended: it cannot see the exit
  // status (Kubernetes).
  bool report_end = false;
  // Without --lp_checkpoint_dir, checkpoints go to the run directory; a
  // pod's is its Secret, read-only, and a pod keeps none without a volume.
  bool checkpoints_in_run_dir = true;
  // Where sockets/ goes when not in the run directory: a pod's emptyDir.
  std::string sockets_root;
};

// The life of a node process: host its nodes, publish them, stop when the
// launcher says so (SIGTERM), or when one of them calls lp::stop() or a
// stop signal comes from elsewhere, which the launcher then passes on to
// every other process.
LP_API int run_node_process(const program& graph, transport_kind transport,
                            const launch_settings& settings,
                            const std::optional<node_site>& chosen_site = std::nullopt);

}  // namespace lp::detail
