#pragma once

// Calls between two processes of one host go over a unix domain socket
// rather than loopback TCP (docs/protocol.md, "On one host"): the same
// HTTP/1.1 requests and replies, the same secret, but no TCP stack on the
// way, and a socket that can carry file descriptors (the shared-memory
// segments of bulk data, wire/shared_memory.hpp). A node that serves on one
// listens at a path in the launch's run directory (a directory only its
// user may enter; the socket itself 0600) and publishes the path beside its
// TCP address, with the identity of the host it runs on; a caller takes
// the socket when its own identity is the same, TCP otherwise.

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// Which kernel and network namespace this process runs in:
// "<boot id>/<device>:<inode of the network namespace>". Two processes with
// the same identity are on one host: a unix socket's path reaches one from
// the other. Processes of one kernel in two network namespaces are not,
// though a shared file system would let them open each other's sockets: a
// container, a pod or a test host of tools/test-hosts.sh is a host of its
// own to a launch, and calls to it cross its network. Empty where the boot
// id cannot be read: then no other process is on this one's host.
inline const std::string& host_identity() {
  static const std::string identity = [] {
    std::string boot;
    std::ifstream(protocol::same_host::boot_id) >> boot;
    struct stat network {};
    if (boot.empty() || ::stat(protocol::same_host::network_namespace, &network) != 0)
      return std::string();
    return boot + "/" + std::to_string(network.st_dev) + ":" +
           std::to_string(network.st_ino);
  }();
  return identity;
}

// The file name of a node's socket in the launch's socket directory: its
// label, each byte but letters, digits, '-', '_' and '.' written %XX (a
// label may hold '/'), then its suffix (".sock").
inline std::string socket_file_name(std::string_view label) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string name;
  for (char c : label) {
    auto byte = static_cast<unsigned char>(c);
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                 (c == '.' && !name.empty());
    if (plain) {
      name += c;
    } else {
      name += '%';
      name += hex[byte >> 4];
      name += hex[byte & 15];
    }
  }
  return name + protocol::same_host::socket_suffix;
}

// A unix socket's address. A path too long for sockaddr_un (108 bytes) is
// reached through its directory, kept open while the address lives:
// /proc/self/fd/<directory>/<name>.
class unix_address {
 public:
  explicit unix_address(const std::string& path) {
    address_.sun_family = AF_UNIX;
    std::string usable = path;
    if (path.size() >= sizeof address_.sun_path) {
      auto slash = path.rfind('/');
      if (slash != std::string::npos) {
        auto directory = slash == 0 ? std::string("/") : path.substr(0, slash);
        directory_ = ::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (directory_ >= 0)
          usable = "/proc/self/fd/" + std::to_string(directory_) + path.substr(slash);
      }
    }
    if (usable.empty() || usable.size() >= sizeof address_.sun_path) return;
    std::memcpy(address_.sun_path, usable.data(), usable.size());
    size_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + usable.size() + 1);
  }
  ~unix_address() {
    if (directory_ >= 0) ::close(directory_);
  }
  unix_address(const unix_address&) = delete;
  unix_address& operator=(const unix_address&) = delete;

  // False for a path that cannot be reached even through its directory.
  bool valid() const { return size_ != 0; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&address_); }
  socklen_t size() const { return size_; }

 private:
  sockaddr_un address_{};
  socklen_t size_ = 0;
  int directory_ = -1;
};

// A stream socket listening at `path`, readable and writable by this user
// only; -1 with errno set if it cannot be. A socket already at the path is
// an earlier life's of the same node (a restarted node's, or one killed
// before it could remove it) and is replaced; any other file is left, and
// the call fails with EEXIST.
inline int listen_unix(const std::string& path) {
  unix_address where(path);
  if (!where.valid()) {
    errno = ENAMETOOLONG;
    return -1;
  }
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      errno = EEXIST;
      return -1;
    }
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // Accepted connections inherit the buffer sizes: a body that does not
  // go through shared memory crosses in few writes.
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &socket_buffer_bytes,
               sizeof socket_buffer_bytes);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &socket_buffer_bytes,
               sizeof socket_buffer_bytes);
  // The directory is its user's alone; the socket is too, as the secret's
  // file is, for a directory someone opened up.
  if (::bind(fd, where.get(), where.size()) != 0 || ::chmod(path.c_str(), 0600) != 0 ||
      ::listen(fd, SOMAXCONN) != 0) {
    int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// The most descriptors one message may bring (the shared-memory segments
// of its arrays: wire/shared_memory.hpp); more are closed unread.
inline constexpr std::size_t max_descriptors = protocol::same_host::max_descriptors;

// The descriptors that came on a connection, as its reads took them.
struct received_descriptors {
  std::vector<int> fds;
  bool truncated = false;  // more came than a message may bring: closed

  received_descriptors() = default;
  received_descriptors(const received_descriptors&) = delete;
  received_descriptors& operator=(const received_descriptors&) = delete;
  ~received_descriptors() { close_all(); }

  void close_all() {
    for (int fd : fds) ::close(fd);
    fds.clear();
  }
};

// Reads up to `size` bytes as recv() does, keeping the descriptors that
// came with them (SCM_RIGHTS), close-on-exec: a read that took bytes
// carrying descriptors without asking for them would close them.
inline ssize_t receive_with_descriptors(int socket, char* into, std::size_t size,
                                        int flags, received_descriptors& came) {
  iovec piece{into, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_descriptors)];
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got = ::recvmsg(socket, &message, flags | MSG_CMSG_CLOEXEC);
  if (got < 0) return got;
  for (auto* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (came.fds.size() < max_descriptors) {
        came.fds.push_back(fd);
      } else {
        ::close(fd);
        came.truncated = true;
      }
    }
  }
  if (message.msg_flags & MSG_CTRUNC) came.truncated = true;
  return got;
}

// A descriptor sent with a message's first bytes (SCM_RIGHTS): attach()
// sets it on the sendmsg that writes them.
class descriptor_to_send {
 public:
  explicit descriptor_to_send(int fd) : fd_(fd) {}
  void attach(msghdr& message) {
    if (fd_ < 0) return;
    message.msg_control = control_;
    message.msg_controllen = sizeof control_;
    auto* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd_, sizeof fd_);
  }
  // Sent with the bytes that have left: later writes carry it no more.
  void sent() { fd_ = -1; }

 private:
  int fd_;
  alignas(cmsghdr) char control_[CMSG_SPACE(sizeof(int))] = {};
};

}  // namespace lp::detail
