#pragma once

// Where the processes of a local launch run: the GPUs each is handed
// (CUDA_VISIBLE_DEVICES) and the cores it is pinned to, from its group's
// resources({.cpus, .gpus}). A Slurm job leaves both to Slurm.

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <vector>

namespace lp::detail {

// "0,1,3" as {0, 1, 3}; "" as {}.
inline std::vector<int> index_list(const std::string& text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (auto index : split(text, ',')) out.push_back(std::stoi(std::string(index)));
  return out;
}

inline std::string index_text(const std::vector<int>& indices) {
  std::string out;
  for (int index : indices) out += (out.empty() ? "" : ",") + std::to_string(index);
  return out;
}

// The NVIDIA devices of this machine (/dev/nvidia0, /dev/nvidia1, ...).
inline std::vector<int> gpus_found() {
  std::vector<int> found;
  if (DIR* dev = ::opendir("/dev")) {
    while (auto* entry = ::readdir(dev)) {
      std::string name = entry->d_name;
      if (name.size() > 6 && name.starts_with("nvidia") &&
          name.find_first_not_of("0123456789", 6) == std::string::npos)
        found.push_back(std::stoi(name.substr(6)));
    }
    ::closedir(dev);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The cores this process may run on.
inline std::vector<int> cores_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cores;
  for (int core = 0; core < CPU_SETSIZE; ++core)
    if (CPU_ISSET(core, &set)) cores.push_back(core);
  return cores;
}

// Pins the calling process (its threads to come) to `cores`; false if the
// kernel refused.
inline bool pin_to(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : cores) CPU_SET(core, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

struct placement {
  std::vector<int> gpus;   // handed to the process; empty: none asked for
  std::vector<int> cores;  // pinned to; empty: not pinned
};

// One placement per process, each process named with its group's settings.
// GPUs are never shared: more asked for than `gpus` holds is refused here,
// before anything starts. Cores are handed out in turn, shared once every
// core has a process, and a process asking for more cores than there are
// is not pinned.
inline std::vector<placement> place(
    const std::vector<std::pair<std::string, group_settings>>& processes,
    const std::vector<int>& gpus, const std::vector<int>& cores) {
  std::vector<placement> out(processes.size());
  std::size_t asked = 0;
  std::string askers;
  for (const auto& [name, settings] : processes)
    if (settings.resources.gpus > 0) {
      asked += static_cast<std::size_t>(settings.resources.gpus);
      askers += (askers.empty() ? "" : ", ") + name + ": " +
                std::to_string(settings.resources.gpus);
    }
  if (asked > gpus.size())
    throw launch_error("the program asks for " + std::to_string(asked) + " GPU(s) (" +
                       askers + ") but this launch has " + std::to_string(gpus.size()) +
                       (gpus.empty() ? "" : " (" + index_text(gpus) + ")") +
                       "; give the devices with --lp_gpus=0,1,... or ask for fewer");
  std::size_t next_gpu = 0, next_core = 0;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const auto& needs = processes[i].second.resources;
    for (int k = 0; k < needs.gpus; ++k) out[i].gpus.push_back(gpus[next_gpu++]);
    if (!processes[i].second.pin_cores || cores.empty() ||
        static_cast<std::size_t>(needs.cpus) > cores.size())
      continue;
    for (int k = 0; k < needs.cpus; ++k)
      out[i].cores.push_back(cores[next_core++ % cores.size()]);
    std::sort(out[i].cores.begin(), out[i].cores.end());
  }
  return out;
}

}  // namespace lp::detail
