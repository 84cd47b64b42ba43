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
//
// (protocol.toml writes its words: a Python node's checkpoints are the same.)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/shell_words.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// A checksum that catches a torn or damaged file (not an attacker), at
// memory speed: FNV-1a over 8-byte words, then the bytes left.
inline std::uint64_t checkpoint_checksum(std::string_view bytes) {
  constexpr std::uint64_t prime = protocol::checkpoint::fnv_prime;
  std::uint64_t hash = protocol::checkpoint::fnv_offset;
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

// The header's first line, without its \n: the format's name and version.
inline std::string checkpoint_first_line() {
  return protocol::checkpoint::magic + std::to_string(protocol::checkpoint::format);
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
  namespace words = protocol::checkpoint;
  std::string header = checkpoint_first_line() + "\n" + words::service +
                       std::string(service) + "\n" + words::bytes +
                       std::to_string(state.size()) + "\n" + words::checksum + sum + "\n";
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
  line(checkpoint_first_line());
  auto saved_service = line(protocol::checkpoint::service);
  auto size_text = line(protocol::checkpoint::bytes);
  auto sum_text = line(protocol::checkpoint::checksum);
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

// The checkpoint a node restores: the newer, by the time it was saved, of
// its own (in the launch's checkpoint directory, where a restart finds its
// last save) and the one in `resume_dir` (--lp_resume's); its own when both
// are as new. Empty when there is neither. One that cannot even be looked
// at is chosen, so that reading it says why.
inline std::string checkpoint_to_restore(const std::string& own_dir,
                                         const std::string& resume_dir,
                                         const std::string& label) {
  std::string chosen;
  timespec newest{};
  for (const auto& dir : {own_dir, resume_dir}) {
    if (dir.empty()) continue;
    auto path = checkpoint_path(dir, label);
    struct stat about {};
    if (::stat(path.c_str(), &about) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;
      return path;
    }
    const auto& saved = about.st_mtim;
    if (chosen.empty() || saved.tv_sec > newest.tv_sec ||
        (saved.tv_sec == newest.tv_sec && saved.tv_nsec > newest.tv_nsec)) {
      chosen = path;
      newest = saved;
    }
  }
  return chosen;
}

inline bool keeps_checkpoints(const program& graph) {
  for (const auto& spec : graph.nodes())
    if (spec.checkpointed) return true;
  return false;
}

// True if `dir` holds the checkpoint of a node of `graph`.
inline bool holds_checkpoints(const program& graph, const std::string& dir) {
  for (const auto& spec : graph.nodes())
    if (spec.checkpointed &&
        ::access(checkpoint_path(dir, spec.label).c_str(), F_OK) == 0)
      return true;
  return false;
}

// A mistyped --lp_resume would start every node from scratch, in silence:
// it must name a directory with the checkpoint of a node of this program.
inline void check_resume_dir(const program& graph, const std::string& dir) {
  auto refused = [&](const std::string& why) {
    return usage_error("--lp_resume=" + dir + ": " + why);
  };
  struct stat about {};
  if (::stat(dir.c_str(), &about) != 0)
    throw refused(errno == ENOENT
                      ? std::string("no such directory")
                      : std::string("cannot look at it: ") + std::strerror(errno));
  if (!S_ISDIR(about.st_mode)) throw refused("not a directory");
  if (!keeps_checkpoints(graph))
    throw refused(
        "no node of program '" + graph.name() +
        "' keeps checkpoints (lp_save and lp_restore): there is nothing to resume");
  if (holds_checkpoints(graph, dir)) return;
  std::string expected;
  int listed = 0;
  for (const auto& spec : graph.nodes())
    if (spec.checkpointed && listed++ < 3)
      expected += (listed > 1 ? ", " : "") + spec.label + ".ckpt";
  throw refused("it holds no checkpoint of a node of program '" + graph.name() + "' (" +
                expected + (listed > 3 ? ", ..." : "") +
                "); is it the directory a launch named at its end?");
}

// Where local launches keep checkpoints unless --lp_checkpoint_dir says:
// under the user's state directory ($XDG_STATE_HOME, else ~/.local/state),
// which outlives the launch and a reboot, by program. Empty for a user with
// neither.
inline std::string checkpoint_home(const std::string& program) {
  std::string base;
  // The XDG base directory specification ignores a relative path.
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && state[0] == '/')
    base = state;
  else if (const char* home = std::getenv("HOME"); home && home[0] == '/')
    base = std::string(home) + "/.local/state";
  else
    return "";
  return base + "/launchpad/checkpoints/" + program;
}

// Makes a launch's own checkpoint directory in checkpoint_home, named by the
// local time it started (2026-12-01_21-26-23, then -2, -3 ... within that
// second), so that no launch takes another's checkpoints for its own and a
// user finds a launch by when it ran.
inline std::string make_launch_checkpoint_dir(const std::string& program) {
  auto parent = checkpoint_home(program);
  if (parent.empty())
    throw launch_error(
        "no directory for the checkpoints: neither XDG_STATE_HOME nor HOME is an "
        "absolute "
        "path; give one with --lp_checkpoint_dir");
  make_directories(parent);
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char started[32];
  std::strftime(started, sizeof started, "%Y-%m-%d_%H-%M-%S", &local);
  for (int n = 1;; ++n) {
    auto dir = parent + "/" + started + (n > 1 ? "-" + std::to_string(n) : "");
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    if (errno != EEXIST)
      throw launch_error("cannot create the checkpoint directory " + dir + ": " +
                         std::strerror(errno));
  }
}

// Where a launch keeps its checkpoints: --lp_checkpoint_dir (a local
// launch sets it to its own directory in checkpoint_home when the user did
// not), else checkpoints/ in its run directory (a Slurm job's, which the
// compute hosts share, and a test_multi_processing launch's).
inline std::string checkpoint_dir_of(const checkpoint_settings& checkpoints,
                                     const std::string& run_dir) {
  if (!checkpoints.dir.empty()) return checkpoints.dir;
  return run_dir.empty() ? "" : run_dir + "/checkpoints";
}

// Tells the user where the checkpoints go, and how to resume from them.
inline void announce_checkpoints(const program& graph, const std::string& dir,
                                 std::ostream& out) {
  if (!dir.empty() && keeps_checkpoints(graph))
    out << "[lp] checkpoints in " << dir
        << " (a later launch resumes with --lp_resume=" << dir << ")" << std::endl;
}

// The command line `command` (argv[0] first) with --lp_resume=dir in place
// of its own --lp_resume, if any, among the launch's flags (before "--").
inline std::vector<std::string> resume_command(const std::vector<std::string>& command,
                                               const std::string& dir) {
  std::vector<std::string> words;
  auto resume = "--lp_resume=" + dir;
  bool placed = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const auto& word = command[i];
    if (i > 0 && !placed && word == "--") {
      words.push_back(resume);
      placed = true;
    }
    if (placed || i == 0) {
      words.push_back(word);
      continue;
    }
    if (word.starts_with("--lp_resume=")) continue;
    if (word == "--lp_resume") {
      // Its value is the next word, as cli's reader takes it.
      if (i + 1 < command.size() && !command[i + 1].starts_with("--")) ++i;
      continue;
    }
    words.push_back(word);
  }
  if (!placed) words.push_back(resume);
  return words;
}

// At a launch's end: where its checkpoints are, and the command line that
// goes on from them (`command`, argv[0] first); nothing if `dir` holds none.
inline bool tell_how_to_resume(const program& graph, const std::string& dir,
                               const std::vector<std::string>& command,
                               std::ostream& out) {
  if (dir.empty() || !holds_checkpoints(graph, dir)) return false;
  auto text =
      "[lp] this launch's checkpoints are in " + dir + "; to go on from them:\n[lp]  ";
  for (const auto& word : resume_command(command, dir)) text += " " + shell_quote(word);
  out << text << std::endl;
  return true;
}

}  // namespace lp::detail
