#pragma once

// What the manifests of a Kubernetes launch and the binary in its pods
// agree on: the names of the launch's objects, the environment each pod
// gets, and where the Secret is mounted (docs/kubernetes.md).

#include <chrono>
#include <cstddef>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/program.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::kube {

// Set in every pod of a launch by its manifests.
namespace pod_env {
inline constexpr const char* role = "LP_KUBE_ROLE";  // "coordinator" or "node"
inline constexpr const char* group =
    "LP_KUBE_GROUP";  // a node pod's process group, as in the graph
inline constexpr const char* service =
    "LP_KUBE_SERVICE";  // the headless Service: the pods' subdomain
// A node pod's: where its emptyDir for the nodes' unix sockets is mounted.
inline constexpr const char* socket_dir = "LP_KUBE_SOCKET_DIR";
// Set by the Job controller in every pod of an Indexed Job.
inline constexpr const char* index = "JOB_COMPLETION_INDEX";
}  // namespace pod_env

inline constexpr std::string_view coordinator_role = "coordinator";
inline constexpr std::string_view node_role = "node";

// Where the launch's Secret is mounted: its keys are the run directory's
// files (secret, tls.crt, tls.key), so a pod reads its credentials as
// every node process does (run_directory::credentials_of).
inline constexpr const char* secret_mount = "/var/run/launchpad";

// Where a node pod mounts an emptyDir for sockets/ of the nodes in the pod:
// its C++ process and the Python nodes it hosts call each other there (the
// Secret's mount is read-only). The volume goes with the pod.
inline constexpr const char* sockets_mount = "/var/run/launchpad-local";

// The coordinator's own directory in its pod: the status page's URL and
// the secret, for `--lp_status` run there (kubectl exec; tools/lp-kube).
inline std::string coordinator_dir(const std::string& launch) {
  return "/tmp/lp-kube-" + launch;
}

// How long a node pod goes on without an answer from the coordinator
// before it takes the launch for ended, and stops.
inline constexpr std::chrono::seconds coordinator_patience{30};

// The coordinator's fixed ports: the nodes find the rendezvous before
// anything else, so its port cannot be chosen at run time.
inline constexpr int rendezvous_port = 7300;
inline constexpr int status_port = 7301;

// `name` as a DNS label (RFC 1123): lower case letters, digits and '-',
// starting and ending with a letter or digit, at most `max` characters.
inline std::string dns_label(std::string_view name, std::size_t max) {
  std::string label;
  for (char c : name) {
    if (label.size() == max) break;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (keep || (!label.empty() && label.back() != '-')) label += keep ? c : '-';
  }
  while (!label.empty() && label.back() == '-') label.pop_back();
  return label.empty() ? "x" : label;
}

// The process groups of a graph, in the order their first node was added:
// one Indexed Job each.
inline std::vector<std::string> groups_of(const program& graph) {
  std::vector<std::string> groups;
  std::set<std::string> seen;
  for (const auto& spec : graph.nodes())
    if (seen.insert(spec.group).second) groups.push_back(spec.group);
  return groups;
}

// The processes of one group, in the order of their indexes in its Job: a
// colocated group is one process, any other one per node.
inline std::vector<unit_plan> units_of(const program& graph, const std::string& group) {
  std::vector<unit_plan> units;
  for (auto& unit : plan_units(graph)) {
    const auto& first = unit.labels.front();
    for (const auto& spec : graph.nodes())
      if (spec.label == first && spec.group == group) units.push_back(unit);
  }
  return units;
}

// The names of one launch's objects. `launch` is a DNS label of at most 30
// characters, so that a pod's host name, `<job>-<index>`, stays within
// the 63 of a label.
struct launch_names {
  std::string launch;

  std::string headless_service() const { return launch; }
  std::string status_service() const { return launch + "-status"; }
  std::string secret() const { return launch + "-secret"; }
  std::string coordinator_job() const { return launch + "-coordinator"; }
  // The Jobs of the graph's groups (groups_of), in its order
  // (docs/kubernetes.md, "The manifests"): `<launch>-<label>`, the group's
  // name as a DNS label of at most 20 characters ("nodes" for the nodes
  // outside any group). A group whose label another group shares is
  // numbered instead: `<launch>-<label's first 16 characters>-<i>`, i its
  // position among all the groups, from 0. So is a group whose label is
  // another's numbered name ("learner_1", when "Learner" is group 1 and
  // "learner" another): every Job's name is the launch's alone.
  std::vector<std::string> jobs(const program& graph) const {
    auto groups = groups_of(graph);
    std::vector<std::string> labels;
    for (const auto& group : groups)
      labels.push_back(group.empty() ? std::string("nodes") : dns_label(group, 20));
    std::vector<bool> numbered(groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i)
      for (std::size_t j = 0; j < groups.size(); ++j)
        if (j != i && labels[j] == labels[i]) numbered[i] = true;
    auto name = [&](std::size_t i) {
      return numbered[i] ? labels[i].substr(0, 16) + "-" + std::to_string(i) : labels[i];
    };
    // Numbered names end in distinct positions, so they differ; a label
    // left as it is may still be one of them.
    for (bool again = true; again;) {
      again = false;
      for (std::size_t i = 0; i < groups.size(); ++i)
        for (std::size_t j = 0; j < groups.size() && !numbered[i]; ++j)
          if (numbered[j] && name(j) == labels[i]) numbered[i] = again = true;
    }
    std::vector<std::string> names;
    for (std::size_t i = 0; i < groups.size(); ++i)
      names.push_back(launch + "-" + name(i));
    return names;
  }
  // The Job of the i-th of the graph's groups (jobs()).
  std::string job_of(const program& graph, std::size_t i) const {
    return jobs(graph).at(i);
  }
  // What a pod of that Job is called in DNS, from any pod of the launch.
  std::string pod_host(const std::string& job, std::size_t index) const {
    return job + "-" + std::to_string(index) + "." + headless_service();
  }
  // The coordinator's rendezvous, as the nodes' LP_RENDEZVOUS.
  std::string rendezvous_url(bool tls) const {
    return std::string(tls ? "https://" : "http://") + pod_host(coordinator_job(), 0) +
           ":" + std::to_string(rendezvous_port);
  }
};

}  // namespace lp::detail::kube
