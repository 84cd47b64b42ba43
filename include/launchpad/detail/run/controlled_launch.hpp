#pragma once

// What lp::controller asks of the launch it holds, however that launch runs
// its nodes: as threads (run/in_process.hpp) or as processes
// (process/node_process.hpp). lp::controller's members are defined once,
// here, and pass each question on.

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

#if LP_DETAIL_DEFINE_COMPILED_PART

namespace lp {

LP_API controller::controller(controller&&) noexcept = default;
LP_API controller& controller::operator=(controller&&) noexcept = default;

LP_API controller::~controller() {
  if (launch_) launch_->stop();
}

LP_API std::shared_ptr<detail::channel> controller::connect(const std::string& label) {
  return launch_->connect(label);
}

LP_API std::map<std::string, std::string> controller::urls() const {
  return launch_->urls();
}
LP_API const std::string& controller::secret() const {
  return launch_->secret();
}
LP_API const std::string& controller::run_dir() const {
  return launch_->run_dir();
}
LP_API std::vector<pid_t> controller::pids() const {
  return launch_->pids();
}

LP_API bool controller::wait(const std::vector<std::string>& names) {
  return launch_->wait_finished(names);
}

LP_API void controller::wait() {
  launch_->wait(std::nullopt);
}

LP_API bool controller::wait_until_stopped(std::chrono::nanoseconds timeout) {
  return launch_->wait(timeout);
}

LP_API bool controller::stop() {
  return launch_->stop();
}
LP_API bool controller::stop_requested() const {
  return launch_->stop_requested();
}
LP_API std::string controller::summary() const {
  return launch_->summary();
}

}  // namespace lp

#endif  // LP_DETAIL_DEFINE_COMPILED_PART
