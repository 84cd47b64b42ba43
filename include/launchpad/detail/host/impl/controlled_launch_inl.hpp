#pragma once

// controlled_launch.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/host/controlled_launch.hpp>

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
