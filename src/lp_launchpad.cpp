// lp-launchpad: the launcher of a Launchpad program written in Python
// (python/launchpad/, docs/coming_from_launchpad.md). The program's front
// end (launchpad.launch) describes the program in a file of its launch's
// own 0700 directory and starts this executable with the file's path and
// the --lp_* flags; this reads the description, builds an lp::program of
// Python nodes that have no C++ declaration, and launches it as a C++
// program is launched: the same launch policies, the same hosting of Python
// nodes (detail/python/python_node.hpp), the same status page and restarts.
//
// The description is CBOR (protocol.toml's launchpad_description): the
// program's name, and per node its group, the name shown for it, whether it
// runs, the labels of the nodes it was given handles to, and its
// definition, cloudpickled. Each process of a launch reads it again, as each process of a
// C++ program builds its graph again; only a node's own process unpickles
// its definition.

#include <fstream>
#include <iostream>
#include <iterator>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace {

// The description's path: the one argument that is no --lp_ flag.
std::string description_path(int argc, char** argv) {
  std::string found;
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word.starts_with("-")) continue;
    if (!found.empty())
      throw lp::launch_error("lp-launchpad takes one description, not '" + found +
                             "' and '" + std::string(word) + "'");
    found = word;
  }
  if (found.empty())
    throw lp::launch_error(
        "usage: lp-launchpad DESCRIPTION [--lp_* flags]; launchpad.launch() writes the "
        "description and starts this (docs/coming_from_launchpad.md)");
  return found;
}

nlohmann::json read_description(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw lp::launch_error("lp-launchpad: cannot read the description " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  try {
    return nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw lp::launch_error("lp-launchpad: the description " + path +
                           " is not CBOR: " + e.what());
  }
}

namespace key = lp::detail::protocol::launchpad_description;

void add_nodes(lp::program& graph, const nlohmann::json& nodes) {
  for (const auto& node : nodes) {
    lp::node_info spec;
    spec.group = node.at(key::group).get<std::string>();
    spec.service = node.at(key::service).get<std::string>();
    spec.has_run = node.at(key::has_run).get<bool>();
    spec.edges = node.at(key::edges).get<std::vector<std::string>>();
    auto recipe = std::make_shared<lp::detail::python_recipe>();
    const auto& definition = node.at(key::definition).get_binary();
    recipe->definition.assign(definition.begin(), definition.end());
    lp::detail::graph_access::add_described(graph, std::move(spec), std::move(recipe));
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto description = read_description(description_path(argc, argv));
    lp::program graph(description.at(key::name).get<std::string>());
    add_nodes(graph, description.at(key::nodes));
    return lp::launch(graph, argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
    return 1;
  }
}
