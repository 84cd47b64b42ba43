// libFuzzer target on a node's unix socket with shared memory
// (docs/protocol.md, "Bulk data through shared memory"): the descriptors a
// request brings and their checks (wire/shared_memory.hpp), the head fields
// Lp-Segments, Lp-Returned and Lp-Bulk, the references to segments in a
// CBOR body (cbor::shared_bytes_tag) and the values read from them, a
// tensor's read in place, and the reply's segment. Everything a peer on
// the node's host can send reaches this code before a method runs.
//
// An input is
//
//   <flags> <size> <fill> ... <method> '\n' <Lp-Returned> '\n' <body>
//
// - flags: bits 0-1 the number of memfds sent with the request (0-3), bit 2
//   sealed against shrinking, bit 3 "Lp-Bulk: shm", bit 4 announce one
//   more than sent, bit 5 a pipe instead of the first memfd, bit 6 the
//   segments read-only;
// - per memfd a size (in 256-byte units) and the byte it is filled with;
// - the method called, the value of Lp-Returned, and the CBOR body.
//
// It sends that request with its descriptors on a new connection, then the
// same body again without any (its Lp-Returned the reply's segments), and
// reads both replies. For ANY input, and traps otherwise:
//
// - each reply is one whole HTTP/1.1 reply with status 200, 400, 404 or 500
//   (the service's methods return or throw; a body that misfits is 400);
// - a 400 for a refused segment says why in the protocol's error body;
// - the node answers the next input (a crash, a hang, a leak at exit are
//   the sanitizers' and libFuzzer's to report), and, once every connection
//   is gone, holds at most the segments its pool keeps free.
//
// Build and run: see tests/fuzz/README.md.

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/json.hpp>
#include <launchpad/tensor.hpp>
// Built from the headers alone (tests/fuzz/meson.build): the compiled part
// the headers above declare comes, inline, with launch.hpp.
#include <launchpad/launch.hpp>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fz {
struct Bulk {
  std::vector<float> floats(std::vector<float> values) { return values; }
  double sum(const std::vector<double>& values) {
    double total = 0;
    for (double v : values) total += v;
    return total;
  }
  lp::tensor<std::int16_t> tensor(lp::tensor<std::int16_t> values) {
    if (values.size() > 0) values[0] = 7;  // a write to a value read in place
    return values;
  }
  std::size_t keep(lp::tensor<float> values) {
    kept.push_back(std::move(values));
    if (kept.size() > 4) kept.erase(kept.begin());
    return kept.size();
  }
  lp::json any(lp::json value) { return value; }
  std::vector<lp::tensor<float>> kept;
};
}  // namespace fz
LP_SERVICE(fz::Bulk, floats, sum, tensor, keep, any);

namespace {

using namespace std::chrono_literals;
constexpr const char* secret = "00112233445566778899aabbccddeeff";

bool verbose() {
  static const bool on = std::getenv("LP_FUZZ_VERBOSE") != nullptr;
  return on;
}

[[noreturn]] void violated(const char* what, std::string_view reply = {}) {
  if (verbose())
    std::fprintf(stderr, "lp fuzz_segments: invariant violated: %s\nreply: %.*s\n", what,
                 static_cast<int>(std::min<std::size_t>(reply.size(), 2000)),
                 reply.data());
  __builtin_trap();
}

// One node for the whole run, serving on a unix socket in a directory of
// its own (removed at exit).
struct node {
  node() : graph("fuzz") {
    char pattern[] = "/tmp/lp-fuzz-segments-XXXXXX";
    if (!::mkdtemp(pattern)) violated("no directory for the socket");
    dir = pattern;
    graph.add_node<fz::Bulk>("bulk");
    lp::detail::host_options options;
    options.policy = lp::detail::policy_kind::test_mt;
    options.secret = secret;
    options.socket_dir = dir;
    options.max_body_bytes = std::size_t{1} << 20;
    options.stop_when_runs_finish = false;
    host = std::make_unique<lp::detail::node_host>(graph, std::move(options));
  }
  ~node() {
    host.reset();
    std::filesystem::remove_all(dir);
  }
  std::string socket() const { return dir + "/bulk.sock"; }
  lp::program graph;
  std::string dir;
  std::unique_ptr<lp::detail::node_host> host;
};

node& the_node() {
  static node n;
  return n;
}

int memfd(std::size_t size, std::uint8_t fill, bool sealed, bool read_only) {
  int fd = ::memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) violated("no memfd");
  if (size > 0) {
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) violated("no ftruncate");
    void* at = ::mmap(nullptr, size, PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) violated("no mmap");
    std::memset(at, fill, size);
    ::munmap(at, size);
  }
  if (sealed) ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | (read_only ? F_SEAL_WRITE : 0));
  return fd;
}

// Sends a whole request with `fds`, then reads one whole reply (by its
// Content-Length); returns it, or "" if the node closed first.
std::string exchange(int socket, const std::string& request,
                     const std::vector<int>& fds) {
  iovec piece{const_cast<char*>(request.data()), request.size()};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    auto* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    sent += static_cast<std::size_t>(n);
    piece.iov_base = const_cast<char*>(request.data()) + sent;
    piece.iov_len = request.size() - sent;
    message.msg_control = nullptr;
    message.msg_controllen = 0;
  }
  std::string reply;
  char buffer[16 << 10];
  auto until = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    auto end = reply.find("\r\n\r\n");
    if (end != std::string::npos) {
      auto at = reply.find("Content-Length: ");
      if (at == std::string::npos || at > end)
        violated("a reply without Content-Length", reply);
      auto length = std::strtoull(reply.c_str() + at + 16, nullptr, 10);
      if (reply.size() >= end + 4 + length) return reply;
    }
    pollfd watched{socket, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left <= 0ms) violated("no whole reply within 5 s", reply);
    // libFuzzer's SIGALRM (its -timeout) interrupts a poll now and then.
    int ready = ::poll(&watched, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) violated("no whole reply within 5 s", reply);
    ssize_t got = ::recv(socket, buffer, sizeof buffer, 0);  // descriptors dropped
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return reply.empty() ? "" : reply;
    reply.append(buffer, static_cast<std::size_t>(got));
  }
}

void check(const std::string& reply) {
  if (reply.empty()) return;  // the node closed: allowed after a refusal
  if (!reply.starts_with("HTTP/1.1 ")) violated("not an HTTP/1.1 reply", reply);
  int status = std::atoi(reply.c_str() + 9);
  if (status != 200 && status != 400 && status != 404 && status != 500)
    violated("a status a node does not give a call", reply);
  if (status == 400 && reply.find("bad_request") == std::string::npos)
    violated("a 400 without the protocol's error body", reply);
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto& n = the_node();
  static const std::size_t baseline = open_descriptors();
  if (size < 1) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto flags = static_cast<std::uint8_t>(input[0]);
  input.remove_prefix(1);
  std::size_t count = flags & 3;
  bool sealed = flags & 4, bulk = flags & 8, lie = flags & 16, pipe = flags & 32,
       read_only = flags & 64;
  std::vector<int> fds;
  for (std::size_t i = 0; i < count && input.size() >= 2; ++i) {
    auto units = static_cast<std::uint8_t>(input[0]);
    auto fill = static_cast<std::uint8_t>(input[1]);
    input.remove_prefix(2);
    if (i == 0 && pipe) {
      int ends[2];
      if (::pipe2(ends, O_CLOEXEC) != 0) violated("no pipe");
      ::close(ends[1]);
      fds.push_back(ends[0]);
    } else {
      fds.push_back(memfd(std::size_t{units} * 256, fill, sealed, read_only));
    }
  }
  auto line = [&input] {
    auto end = input.find('\n');
    auto out = input.substr(0, end);
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
    return out;
  };
  auto method = line();
  auto returned = line();
  auto printable = [](std::string_view text) {
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
        return false;
    return true;
  };
  if (!printable(method) || (!returned.empty() && !printable(returned))) {
    for (int fd : fds) ::close(fd);
    return 0;
  }
  auto request = [&](bool first) {
    std::string text =
        "POST /lp/v1/call/" + std::string(method) +
        " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/cbor\r\n"
        "Authorization: Bearer " +
        secret + "\r\n";
    if (bulk) text += "Lp-Bulk: shm\r\n";
    if (first && !fds.empty())
      text += "Lp-Segments: " + std::to_string(fds.size() + (lie ? 1 : 0)) + "\r\n";
    if (!first && !returned.empty())
      text += "Lp-Returned: " + std::string(returned) + "\r\n";
    text += "Content-Length: " + std::to_string(input.size()) + "\r\n\r\n";
    text += input;
    return text;
  };
  int socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  lp::detail::unix_address where(n.socket());
  if (socket < 0 || ::connect(socket, where.get(), where.size()) != 0)
    violated("cannot connect to the node's socket");
  timeval limit{5, 0};
  ::setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  check(exchange(socket, request(true), fds));
  for (int fd : fds) ::close(fd);
  check(exchange(socket, request(false), {}));
  ::close(socket);
  // Every connection's segments go with it: what is left is the pool's.
  auto until = std::chrono::steady_clock::now() + 5s;
  while (open_descriptors() > baseline + 64) {
    if (std::chrono::steady_clock::now() > until)
      violated("descriptors pile up in the node");
    std::this_thread::sleep_for(1ms);
  }
  return 0;
}
