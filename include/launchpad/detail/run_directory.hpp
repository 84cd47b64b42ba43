#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <launchpad/detail/output.hpp>
#include <launchpad/detail/secret.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

// A launch's own directory under /tmp, readable only by its user: it holds
// the launch's secret (the file `secret`, for curl) and, when asked, the
// nodes' logs. The secret goes with the launch; the directory too, unless
// logs are left in it.
class run_directory {
 public:
  // An empty secret (an --lp_insecure launch) writes no file.
  run_directory(const std::string& program, std::string secret) : secret_(std::move(secret)) {
    std::string pattern = "/tmp/lp-" + program + "-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw error("launch_error", "cannot create a run directory under /tmp");
    path_ = pattern;
    if (secret_.empty()) return;
    auto file = path_ + "/secret";
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw error("launch_error", "cannot write " + file);
    write_all(fd, secret_ + "\n");
    ::close(fd);
  }
  run_directory(const run_directory&) = delete;
  run_directory& operator=(const run_directory&) = delete;
  ~run_directory() {
    if (!secret_.empty()) ::unlink((path_ + "/secret").c_str());
    ::rmdir(path_.c_str());  // fails, as it should, while logs are in it
  }

  const std::string& path() const { return path_; }
  const std::string& secret() const { return secret_; }

  // Tells the user where the secret is (never the secret itself).
  void announce(std::ostream& out) const {
    if (!secret_.empty()) out << "[lp] the launch's secret is in " << path_ << "/secret" << std::endl;
  }

 private:
  std::string secret_;
  std::string path_;
};

}  // namespace lp::detail
