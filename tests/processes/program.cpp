// The program the multi-processing tests launch:
//   program --scenario=<name> --dir=<writable directory> [--graph_mistake=<kind>]
//           [--lp_... flags]
// or one side of a transfer through shared memory (bulk_peers.hpp):
//   program --bulk_serve=<socket directory> --markers=<directory>
//   program --bulk_call --markers=<directory> --hold_ms=<ms>
#include <string>
#include <string_view>

#include "bulk_peers.hpp"
#include "scenarios.hpp"

int main(int argc, char** argv) {
  std::string scenario, dir = "/tmp", mistake, bulk_serve, markers;
  bool bulk_call = false;
  int hold_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--scenario=")) scenario = arg.substr(11);
    if (arg.starts_with("--dir=")) dir = arg.substr(6);
    if (arg.starts_with("--graph_mistake=")) mistake = arg.substr(16);
    if (arg.starts_with("--bulk_serve=")) bulk_serve = arg.substr(13);
    if (arg == "--bulk_call") bulk_call = true;
    if (arg.starts_with("--markers=")) markers = arg.substr(10);
    if (arg.starts_with("--hold_ms=")) hold_ms = std::stoi(std::string(arg.substr(10)));
  }
  if (!bulk_serve.empty()) return bulk_peers::serve(bulk_serve, markers);
  if (bulk_call) return bulk_peers::call(markers, hold_ms);
  if (scenario == "sequential_launches" || scenario == "nested_launch")
    return scenarios::two_launches(scenario, dir, argc, argv);
  lp::program p("scenario_" + scenario);
  scenarios::make(p, scenario, dir);
  // Mistakes in building the graph, made where a user's are: in main(),
  // uncaught (tests/unit-graph.cpp).
  if (mistake == "env") p.group("extra").env({{"LP_SECRET", "x"}});
  if (mistake == "label") p.add_node<scenarios::Counter>("no spaces");
  if (mistake == "reserved") p.reserve<scenarios::Counter>("later");
  return lp::launch<lp::local_multi_processing>(p, argc, argv);
}
