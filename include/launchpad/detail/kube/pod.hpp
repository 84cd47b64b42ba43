#pragma once

// What a pod of a Kubernetes launch learns from its environment: which
// process of the program it runs (docs/kubernetes.md, "In the pods").

#include <cstdlib>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <string>

namespace lp::detail::kube {

// A variable the pod's manifest sets; missing, the pod was not made by
// this library's manifests. (LP_KUBE_ROLE alone is taken out of the
// environment: it tells a process that it is a pod's.)
inline std::string pod_setting(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value)
    throw launch_error(std::string(name) +
                       " is not set: this pod was not made from the manifests that "
                       "--lp_launch=kubernetes writes (docs/kubernetes.md)");
  return value;
}

// Which process of the program this pod runs: its Job's group, and the
// Job controller's index.
inline unit_plan unit_of_pod(const program& graph) {
  // Empty for the nodes outside any group.
  const char* group_value = std::getenv(pod_env::group);
  if (!group_value) pod_setting(pod_env::group);  // throws, naming it
  std::string group = group_value;
  auto index_text = pod_setting(pod_env::index);
  auto units = units_of(graph, group);
  std::size_t index = 0;
  try {
    index = std::stoul(index_text);
  } catch (const std::exception&) {
    throw launch_error(std::string(pod_env::index) + "='" + index_text +
                       "' is not an index");
  }
  if (index >= units.size())
    throw launch_error("this binary's program '" + graph.name() + "' has " +
                       std::to_string(units.size()) + " processes in group '" + group +
                       "', but the pod has index " + std::to_string(index) +
                       ": was the image built from another version of the program?");
  return units[index];
}

}  // namespace lp::detail::kube
