#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <launchpad/detail/run/output.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

// A launch's own directory under /tmp, readable only by its user: it holds
// the launch's secret (the file `secret`, for curl) and, when asked, the
// nodes' logs. The secret goes with the launch; the directory too, unless
// logs are left in it.
class run_directory {
 public:
  // An empty secret (an --lp_insecure launch) writes no file. A Slurm
  // launch makes it in a directory the compute hosts share.
  run_directory(const std::string& program, std::string secret, const std::string& parent = "/tmp")
      : secret_(std::move(secret)) {
    std::string pattern = parent + "/lp-" + program + "-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw launch_error("cannot create a run directory under " + parent +
                                      "; is it there, and writable?");
    path_ = pattern;
    if (secret_.empty()) return;
    auto file = path_ + "/secret";
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw launch_error("cannot write " + file);
    write_all(fd, secret_ + "\n");
    ::close(fd);
  }
  // The run directory another process made (a Slurm job's, made by the
  // command that submitted it), with the secret in it, if any.
  struct adopt {};
  run_directory(adopt, std::string path) : path_(std::move(path)) {
    std::ifstream(path_ + "/secret") >> secret_;
  }
  run_directory(const run_directory&) = delete;
  run_directory& operator=(const run_directory&) = delete;
  ~run_directory() {
    if (kept_) return;
    if (!secret_.empty()) ::unlink((path_ + "/secret").c_str());
    ::unlink((path_ + "/nodes").c_str());
    ::unlink((path_ + "/status").c_str());  // the status page's URL
    ::rmdir(path_.c_str());  // fails, as it should, while logs are in it
  }

  const std::string& path() const { return path_; }
  // Leaves the directory and its secret to whoever goes on using them (a
  // submitted Slurm job).
  void keep() { kept_ = true; }
  const std::string& secret() const { return secret_; }

  // Tells the user where the secret is (never the secret itself).
  void announce(std::ostream& out) const {
    if (!secret_.empty()) out << "[lp] the launch's secret is in " << path_ << "/secret" << std::endl;
  }

 private:
  std::string secret_;
  std::string path_;
  bool kept_ = false;
};

// Adds "<label> <url>" to the run directory's file `nodes`, for tools that
// attach to a running program (the Python client's attach(run_dir)). Every
// process of a launch appends its own nodes, whole lines at a time; a
// restarted node adds a new line, and the last line of a label is the one
// that holds.
inline void record_node_address(const std::string& run_dir, const std::string& label,
                                const std::string& url) {
  int fd = ::open((run_dir + "/nodes").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the launch runs on; only attaching tools miss it
  write_all(fd, label + " " + url + "\n");
  ::close(fd);
}

}  // namespace lp::detail
