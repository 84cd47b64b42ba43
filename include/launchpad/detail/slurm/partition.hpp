#pragma once

// A job that asks more of one host than any host of its partition has is
// left pending for ever by Slurm; the launch refuses it before submitting.

#include <algorithm>
#include <launchpad/detail/process/run_tool.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

struct partition_hosts {
  std::string name;
  int cpus = 0;  // of its largest host
  long memory_mb = 0;
  int gpus = 0;
  std::vector<int> host_cpus;  // of each host
};

// sinfo's "gpu:2", "gpu:a100:4(S:0-1)" or "(null)", as a count of GPUs.
inline int gpus_in(std::string_view gres) {
  int total = 0;
  for (auto item : split(gres, ',')) {
    auto text = item.substr(0, item.find('('));
    if (!text.starts_with("gpu")) continue;
    auto colon = text.rfind(':');
    if (colon == std::string::npos) continue;
    try {
      total += std::stoi(std::string(text.substr(colon + 1)));
    } catch (const std::exception&) {
    }
  }
  return total;
}

// The partition `wanted`, or the cluster's default one if empty.
inline partition_hosts find_partition(const std::string& wanted) {
  auto listed = run_tool({"sinfo", "--noheader", "--Node", "--format=%P|%c|%m|%G"},
                         std::chrono::seconds(60));
  if (listed.status != 0)
    throw launch_error("sinfo failed, so Slurm cannot be asked about its partitions: " +
                       std::string(trim(listed.text)));
  partition_hosts found;
  std::vector<std::string> names;
  for (auto row : split(listed.text, '\n')) {
    auto fields = split(row, '|');
    if (fields.size() != 4) continue;
    std::string name(trim(fields[0]));
    bool is_default = name.ends_with('*');
    if (is_default) name.pop_back();
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    if (wanted.empty() ? !is_default : name != wanted) continue;
    found.name = name;
    try {
      found.host_cpus.push_back(std::stoi(std::string(fields[1])));
      found.cpus = std::max(found.cpus, found.host_cpus.back());
      found.memory_mb = std::max(found.memory_mb, std::stol(std::string(fields[2])));
    } catch (const std::exception&) {
    }
    found.gpus = std::max(found.gpus, gpus_in(trim(fields[3])));
  }
  if (found.name.empty()) {
    std::string known;
    for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
    throw launch_error(
        (wanted.empty() ? std::string("this cluster has no default partition")
                        : "there is no partition " + wanted) +
        "; choose one with --lp_slurm_partition (sinfo lists: " + known + ")");
  }
  return found;
}

inline void check_fits(const std::vector<unit_plan>& units,
                       const partition_hosts& hosts) {
  for (const auto& u : units) {
    const auto& needs = u.settings.resources;
    auto refuse = [&](const std::string& what, long asked, long largest) {
      throw launch_error(
          "the process of " + u.name + " asks for " + std::to_string(asked) + " " + what +
          ", but the largest host of partition " + hosts.name + " has " +
          std::to_string(largest) + "; lower its group's resources() or choose " +
          "another partition with --lp_slurm_partition. Nothing was submitted.");
    };
    if (needs.cpus > hosts.cpus) refuse("CPUs", needs.cpus, hosts.cpus);
    if (needs.memory_mb > hosts.memory_mb)
      refuse("MB of memory", needs.memory_mb, hosts.memory_mb);
    if (needs.gpus > hosts.gpus) refuse("GPUs", needs.gpus, hosts.gpus);
  }
  // The job is one task per process, each sized for the largest request:
  // the partition must hold that many such tasks at once.
  int task_cpus = 1;
  for (const auto& u : units) task_cpus = std::max(task_cpus, u.settings.resources.cpus);
  std::size_t room = 0;
  for (int cpus : hosts.host_cpus) room += static_cast<std::size_t>(cpus / task_cpus);
  if (units.size() > room)
    throw launch_error(
        "the program runs " + std::to_string(units.size()) + " processes of " +
        std::to_string(task_cpus) + " CPU(s) each, but partition " + hosts.name +
        " holds at most " + std::to_string(room) +
        " at once; colocate groups (p.group(...).colocate()), lower resources() or "
        "choose another partition with --lp_slurm_partition. Nothing was submitted.");
}

// Pending reasons that no amount of waiting changes.
inline bool hopeless(const std::string& reason) {
  for (const char* never :
       {"PartitionNodeLimit", "PartitionTimeLimit", "PartitionConfig", "BadConstraints",
        "InvalidAccount", "InvalidQOS", "AccountNotAllowed", "QOSNotAllowed"})
    if (reason == never) return true;
  return false;
}

}  // namespace lp::detail
