// The program the slurm tests launch: a scenario of tests/processes, with
// resources for one of its groups:
//   program --scenario=<name> --dir=<directory> [--group=<g> --cpus=<n>
//           --memory_mb=<n> --gpus=<n>] [--lp_... flags]
#include <string>
#include <string_view>

#include "../processes/scenarios.hpp"

int main(int argc, char** argv) {
  std::string scenario, dir = "/tmp", group;
  lp::resources needs;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) {
      return std::string(arg.substr(name.size()));
    };
    if (arg.starts_with("--scenario=")) scenario = value("--scenario=");
    if (arg.starts_with("--dir=")) dir = value("--dir=");
    if (arg.starts_with("--group=")) group = value("--group=");
    if (arg.starts_with("--cpus=")) needs.cpus = std::stoi(value("--cpus="));
    if (arg.starts_with("--memory_mb="))
      needs.memory_mb = std::stol(value("--memory_mb="));
    if (arg.starts_with("--gpus=")) needs.gpus = std::stoi(value("--gpus="));
  }
  lp::program p("scenario_" + scenario);
  scenarios::make(p, scenario, dir);
  if (!group.empty()) p.group(group).resources(needs);
  return lp::launch<lp::slurm>(p, argc, argv);
}
