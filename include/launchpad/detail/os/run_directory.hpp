#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/spawn.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/error.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

namespace lp::detail {

// A launch's own directory under /tmp, readable only by its user: it holds
// the launch's secret (the file `secret`, for curl), its TLS credentials if
// it has them (tls.crt, tls.key, and tls_ca.crt for a site's CA), the
// `nodes` and `status` files, a test's checkpoints and, when asked, the
// nodes' logs. Everything in it goes with the launch, whatever it is, but
// logs/; the directory too, unless logs are left in it. If the process
// that made it dies first (SIGKILL, _Exit), its reaper clears it the same
// way (group_reaper).
class run_directory {
 public:
  // The files of the TLS credentials.
  static constexpr const char* certificate_file = protocol::run_directory::certificate;
  static constexpr const char* key_file = protocol::run_directory::key;
  static constexpr const char* authority_file = protocol::run_directory::authority;
  // What a launch leaves of it: the nodes' logs, if any (--lp_log_dir's
  // default is this folder of it; the reaper's script names it too).
  static constexpr const char* logs_dir = "logs";
  // logs/ of the run directory at `run_dir`.
  static std::string logs_in(const std::string& run_dir) {
    return run_dir + "/" + logs_dir;
  }

  // An empty secret (an --lp_insecure launch) writes no file, nor do empty
  // credentials (no TLS). A Slurm launch makes it in a directory the
  // compute hosts share.
  run_directory(const std::string& program, std::string secret,
                const std::string& parent = "/tmp", tls_credentials tls = {})
      : secret_(std::move(secret)), tls_(std::move(tls)) {
    auto& reaper = group_reaper::of_this_process();  // first: it may fail to start
    std::string pattern = parent + "/lp-" + program + "-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw launch_error("cannot create a run directory under " + parent +
                         "; is it there, and writable?");
    path_ = pattern;
    made_ = true;
    reaper.clear(path_);
    if (!secret_.empty()) write_private(protocol::run_directory::secret, secret_ + "\n");
    if (tls_.empty()) return;
    write_private(certificate_file, tls_.certificate);
    write_private(key_file, tls_.key);
    // A launch's own certificate is its own authority.
    if (tls_.authority != tls_.certificate) write_private(authority_file, tls_.authority);
  }
  // The run directory another process made (a Slurm job's, made by the
  // command that submitted it), with the secret and credentials in it, if
  // any.
  struct adopt {};
  run_directory(adopt, std::string path) : path_(std::move(path)) {
    std::tie(secret_, tls_) = credentials_of(path_);
  }

  // The secret and TLS credentials in the run directory at `path`, which
  // its maker wrote. A node process reads its own here, never from its
  // environment: Slurm carries a job step's environment to the compute
  // host in the clear.
  static std::pair<std::string, tls_credentials> credentials_of(const std::string& path) {
    std::pair<std::string, tls_credentials> found;
    std::ifstream(path + "/" + protocol::run_directory::secret) >> found.first;
    auto& tls = found.second;
    tls.certificate = read_file(path, certificate_file);
    if (tls.certificate.empty()) return found;
    tls.key = read_file(path, key_file);
    tls.authority = read_file(path, authority_file);
    if (tls.authority.empty()) tls.authority = tls.certificate;
    return found;
  }
  run_directory(const run_directory&) = delete;
  run_directory& operator=(const run_directory&) = delete;
  ~run_directory() {
    if (kept_) return;
    if (made_) {
      clear(path_);
      group_reaper::of_this_process().spare(path_);
      return;
    }
    // Another process's (a Slurm job's): what it left for this launch (the
    // credentials) and what this launch wrote; the job's record (its
    // script, logs and result) stays.
    if (!secret_.empty())
      ::unlink((path_ + "/" + protocol::run_directory::secret).c_str());
    if (!tls_.empty())
      for (const char* file : {certificate_file, key_file, authority_file})
        ::unlink((path_ + "/" + file).c_str());
    ::unlink((path_ + "/" + protocol::run_directory::nodes).c_str());
    ::unlink((path_ + "/status").c_str());  // the status page's URL
    // The nodes' sockets, of every host the job ran on: each node removes
    // its own; one killed before it could left it, and no step runs now.
    clear_sockets(path_ + "/" + protocol::run_directory::sockets);
    ::rmdir(path_.c_str());  // fails, as it should, while logs are in it
  }

  const std::string& path() const { return path_; }
  // Leaves the directory and its secret to whoever goes on using them (a
  // submitted Slurm job).
  void keep() {
    kept_ = true;
    if (made_) group_reaper::of_this_process().spare(path_);
  }

  // Removes everything in the directory at `path` but logs/, then logs/ if
  // it is empty, then the directory if it is empty: whatever a launch put
  // there (files, sockets, folders), not a list of names.
  LP_API static void clear(const std::string& path);
  // Removes the sockets in the directory at `path`, then the directory if
  // it is empty: a file of another kind, which no launch puts there, stays.
  LP_API static void clear_sockets(const std::string& path);
  const std::string& secret() const { return secret_; }
  // Empty for a launch without TLS.
  const tls_credentials& tls() const { return tls_; }

  // Tells the user where the secret and credentials are (never themselves).
  void announce(std::ostream& out) const {
    if (!secret_.empty())
      out << "[lp] the launch's secret is in " << path_ << "/"
          << protocol::run_directory::secret << std::endl;
    if (!tls_.empty())
      out << "[lp] nodes speak TLS; the launch's certificate and key are in " << path_
          << "/" << certificate_file << " and " << key_file << std::endl;
  }

 private:
  // A file of the directory that only its owner may read.
  void write_private(const std::string& name, const std::string& text) const {
    write_private_file(path_ + "/" + name, text);
  }

  // A file of the directory at `path`, whole; empty if it is not there.
  static std::string read_file(const std::string& path, const std::string& name) {
    std::ifstream in(path + "/" + name, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    return text.str();
  }

  std::string secret_;
  tls_credentials tls_;
  std::string path_;
  bool made_ = false;  // by this process: it clears it
  bool kept_ = false;
};

// Adds "<label> <url>" to the run directory's file `nodes`, for tools that
// attach to a running program (the Python client's attach(run_dir)). Every
// process of a launch appends its own nodes, whole lines at a time; a
// restarted node adds a new line, and the last line of a label is the one
// that holds.
inline void record_node_address(const std::string& run_dir, const std::string& label,
                                const std::string& url) {
  int fd = ::open((run_dir + "/" + protocol::run_directory::nodes).c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the launch runs on; only attaching tools miss it
  write_all(fd, label + " " + url + "\n");
  ::close(fd);
}

}  // namespace lp::detail
