#pragma once

// The program graph as a picture: --lp_graph=dot (Graphviz) or mermaid;
// or as JSON, for programs.
// Nodes are grouped by their group; an edge goes from each node to every
// node it was given a handle to, labelled with that node's service.

#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lp::detail {

// A node's service, and the Python class that serves it if one does.
inline std::string served_by(const node_info& spec) {
  if (!spec.python) return spec.service;
  return spec.service + " (Python " + std::string(spec.python->module) + "." +
         std::string(spec.python->name) + ")";
}

inline std::string graph_dot(const program& graph) {
  auto quoted = [](const std::string& text) { return "\"" + text + "\""; };
  std::map<std::string, std::vector<const node_info*>> groups;
  for (const auto& spec : graph.nodes()) groups[spec.group].push_back(&spec);
  std::string out =
      "digraph " + quoted(graph.name()) + " {\n  rankdir=LR;\n  node [shape=box];\n";
  for (const auto& [group, members] : groups) {
    std::string indent = group.empty() ? "  " : "    ";
    if (!group.empty())
      out += "  subgraph " + quoted("cluster_" + group) +
             " {\n    label=" + quoted(group) + ";\n";
    for (const auto* spec : members)
      out += indent + quoted(spec->label) +
             " [label=" + quoted(spec->label + "\\n" + served_by(*spec)) + "];\n";
    if (!group.empty()) out += "  }\n";
  }
  for (const auto& spec : graph.nodes())
    for (const auto& target : spec.edges)
      out += "  " + quoted(spec.label) + " -> " + quoted(target) +
             " [label=" + quoted(graph.node(target).service) + "];\n";
  return out + "}\n";
}

inline std::string graph_mermaid(const program& graph) {
  std::map<std::string, std::string> ids;  // labels may hold '/', ids may not
  for (const auto& spec : graph.nodes())
    ids[spec.label] = "n" + std::to_string(ids.size());
  auto box = [&](const node_info& spec) {
    return ids[spec.label] + "[\"" + spec.label + "<br/>" + served_by(spec) + "\"]";
  };
  std::map<std::string, std::vector<const node_info*>> groups;
  for (const auto& spec : graph.nodes()) groups[spec.group].push_back(&spec);
  std::string out = "flowchart LR\n";
  for (const auto& [group, members] : groups) {
    if (!group.empty()) out += "  subgraph " + group + "\n";
    for (const auto* spec : members)
      out += (group.empty() ? "  " : "    ") + box(*spec) + "\n";
    if (!group.empty()) out += "  end\n";
  }
  for (const auto& spec : graph.nodes())
    for (const auto& target : spec.edges)
      out += "  " + ids[spec.label] + " -- " + graph.node(target).service + " --> " +
             ids[target] + "\n";
  return out;
}

// For programs that read the graph (a Launchpad program's CppNode checks
// the node it is to run, python/launchpad/_cpp.py): each node's label,
// group, service, whether it has a run(), and the nodes it was given
// handles to.
inline std::string graph_json(const program& graph) {
  namespace key = protocol::graph_json;
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& spec : graph.nodes())
    nodes.push_back({{key::label, spec.label},
                     {key::group, spec.group},
                     {key::service, spec.service},
                     {key::has_run, spec.has_run},
                     {key::edges, spec.edges}});
  return nlohmann::json{{key::name, graph.name()}, {key::nodes, std::move(nodes)}}
             .dump() +
         "\n";
}

inline std::string graph_picture(const program& graph, const std::string& format) {
  if (format == "dot") return graph_dot(graph);
  if (format == "mermaid") return graph_mermaid(graph);
  if (format == protocol::graph_json::format) return graph_json(graph);
  throw usage_error("--lp_graph=" + format + ": choose dot, mermaid or json");
}

}  // namespace lp::detail
