#pragma once

// What lp::controller asks of the launch it holds, however that launch runs
// its nodes: as threads (host/in_process.hpp) or as processes
// (process/local_launch.hpp). lp::controller's members are defined once,
// in impl/controlled_launch_inl.hpp, and pass each question on.

#include <sys/types.h>

#include <chrono>
#include <launchpad/detail/call/channel.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/launch/controller.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lp::detail {

class controlled_launch {
 public:
  virtual ~controlled_launch() = default;
  virtual std::shared_ptr<channel> connect(const std::string& label) = 0;
  virtual std::map<std::string, std::string> urls() const = 0;
  virtual const std::string& secret() const = 0;
  virtual const std::string& run_dir() const = 0;
  virtual std::vector<pid_t> pids() const = 0;
  virtual bool wait_finished(const std::vector<std::string>& names) = 0;
  // Waits for the program's stop, at most `timeout` (none: for ever), then
  // shuts it down; false if it did not stop in time. Throws node_failure if
  // a node failed.
  virtual bool wait(std::optional<std::chrono::nanoseconds> timeout) = 0;
  virtual bool stop() = 0;
  virtual bool stop_requested() const = 0;
  virtual std::string summary() const = 0;
};

}  // namespace lp::detail
