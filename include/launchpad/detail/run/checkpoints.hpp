#pragma once

// Checkpoint files: a node's saved state (lp_save, in CBOR) behind a header
// that names the service and checks the bytes, written so that a crash at
// any moment leaves the last complete checkpoint (docs/launching.md,
// "Fault tolerance").
//
//   lp-checkpoint 1\n
//   service <name>\n
//   bytes <n>\n
//   fnv1a64 <16 hex digits>\n
//   <n bytes of CBOR>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <launchpad/detail/run/flags.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace lp::detail {

// A checksum that catches a torn or damaged file (not an attacker), at
// memory speed: FNV-1a over 8-byte words, then the bytes left.
inline std::uint64_t checkpoint_checksum(std::string_view bytes) {
  constexpr std::uint64_t prime = 0x100000001b3ULL;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    hash = (hash ^ word) * prime;
  }
  for (; i < bytes.size(); ++i)
    hash = (hash ^ static_cast<unsigned char>(bytes[i])) * prime;
  return hash;
}

inline bool write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    auto n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The file of the node labelled `label` ("actors/3": actors/3.ckpt) in `dir`.
inline std::string checkpoint_path(const std::string& dir, const std::string& label) {
  return dir + "/" + label + ".ckpt";
}

inline void make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    auto part = path.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw launch_error("cannot create the checkpoint directory " + part + ": " +
                         std::strerror(errno));
    if (slash == std::string::npos) return;
  }
}

// Writes the checkpoint at `path` whole or not at all: into a temporary file,
// synced, then renamed over the old one, and the directory synced, so that
// a crash leaves the old checkpoint or the new one, never part of one.
inline void write_checkpoint(const std::string& path, std::string_view service,
                             std::string_view state) {
  auto dir = path.substr(0, path.rfind('/'));
  make_directories(dir);
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx",
                static_cast<unsigned long long>(checkpoint_checksum(state)));
  std::string header = "lp-checkpoint 1\nservice " + std::string(service) + "\nbytes " +
                       std::to_string(state.size()) + "\nfnv1a64 " + sum + "\n";
  auto temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    throw launch_error("cannot write the checkpoint " + temporary + ": " +
                       std::strerror(errno));
  bool written = write_fully(fd, header) && write_fully(fd, state) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    throw launch_error("cannot write the checkpoint " + path + ": " +
                       std::strerror(errno));
  }
  if (int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

// The state saved at `path`, or nothing if there is no such file. Throws
// checkpoint_error, naming the file, for one that is damaged or holds the
// state of another service than `service`.
inline std::optional<std::string> read_checkpoint(const std::string& path,
                                                  std::string_view service) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw checkpoint_error("cannot read the checkpoint " + path + ": " +
                           std::strerror(errno));
  }
  // One allocation, read straight into: a state may be gigabytes.
  struct stat about {};
  std::string text;
  if (::fstat(fd, &about) == 0 && about.st_size > 0)
    text.resize(static_cast<std::size_t>(about.st_size));
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) text.resize(std::max<std::size_t>(2 * got, 4096));
    auto n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw checkpoint_error("cannot read the checkpoint " + path + ": " +
                             std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  ::close(fd);
  auto corrupt = [&](const std::string& why) {
    return checkpoint_error(
        "the checkpoint " + path + " is damaged (" + why +
        "); remove it to start that node afresh, or resume from another");
  };
  std::size_t at = 0;
  auto line = [&](std::string_view key) {
    auto end = text.find('\n', at);
    if (end == std::string::npos || text.compare(at, key.size(), key) != 0)
      throw corrupt("no line '" + std::string(key) + "...' where expected");
    auto value = text.substr(at + key.size(), end - at - key.size());
    at = end + 1;
    return value;
  };
  line("lp-checkpoint 1");
  auto saved_service = line("service ");
  auto size_text = line("bytes ");
  auto sum_text = line("fnv1a64 ");
  if (saved_service != service)
    throw checkpoint_error(
        "the checkpoint " + path + " holds the state of a " + saved_service +
        ", not of a " + std::string(service) +
        "; is it another program's, or was the node's service changed?");
  std::string_view state = std::string_view(text).substr(at);
  if (size_text != std::to_string(state.size()))
    throw corrupt("it has " + std::to_string(state.size()) +
                  " bytes of state, its header says " + size_text);
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx",
                static_cast<unsigned long long>(checkpoint_checksum(state)));
  if (sum_text != sum) throw corrupt("its checksum does not match its bytes");
  text.erase(0, at);  // moves the state down: no second copy of it
  return text;
}

// Where a launch keeps its checkpoints: --lp_checkpoint_dir, else
// checkpoints/ in its run directory (which then outlives the launch).
inline std::string checkpoint_dir_of(const launch_flags& flags,
                                     const std::string& run_dir) {
  if (!flags.checkpoint_dir.empty()) return flags.checkpoint_dir;
  return run_dir.empty() ? "" : run_dir + "/checkpoints";
}

// Tells the user where the checkpoints go, and how to resume from them.
inline void announce_checkpoints(const program& graph, const std::string& dir,
                                 std::ostream& out) {
  if (dir.empty()) return;
  for (const auto& spec : graph.nodes())
    if (spec.checkpointed) {
      out << "[lp] checkpoints in " << dir
          << " (a later launch resumes with --lp_resume=" << dir << ")" << std::endl;
      return;
    }
}

}  // namespace lp::detail
