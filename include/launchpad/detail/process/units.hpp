#pragma once

// The processes of a launch, as planned from its graph: one per node, or
// one per colocated group, holding that group's nodes. Every launch of
// processes plans them so (local_mp, the Slurm job, the pods).

#include <cstddef>
#include <launchpad/program.hpp>
#include <map>
#include <string>
#include <vector>

namespace lp::detail {

// A process of a launch: a node, or a colocated group's nodes.
struct unit_plan {
  std::string name;  // the node's label, or the colocated group's name
  std::vector<std::string> labels;
  group_settings settings;
};

inline std::vector<unit_plan> plan_units(const program& graph) {
  std::vector<unit_plan> units;
  std::map<std::string, std::size_t> colocated;
  for (const auto& spec : graph.nodes()) {
    auto settings = graph.settings_of(spec.group);
    if (settings.colocated) {
      auto [it, added] = colocated.emplace(spec.group, units.size());
      if (added) units.push_back({spec.group, {}, settings});
      units[it->second].labels.push_back(spec.label);
    } else {
      units.push_back({spec.label, {spec.label}, settings});
    }
  }
  return units;
}

}  // namespace lp::detail
