// libFuzzer target on a node's HTTP/1.1 server (lp::detail::listener): its
// reading of request heads, bodies (by Content-Length and chunked, with
// trailers), pipelined requests and 100-continue, its routing, and the
// replies and refusals it writes. Everything a peer can send reaches this
// code before a node sees a call.
//
// An input is the bytes a peer sends on one connection, after which it
// closes its side. The server runs in this process on 127.0.0.1, with a few
// routes (below) and a body limit of 4 KiB; the harness reads all it sends
// back until it closes the connection.
//
// For ANY input, and traps (a crash for libFuzzer) otherwise:
//
// - the server closes the connection within 3 s of the peer's end: no
//   deadline of its own is waited out (nor answered 408), as the peer's end
//   is in plain sight;
// - what comes back is a sequence of whole HTTP/1.1 replies, each with a
//   status this server gives (100, 200, 400, 404, 413, 417, 431, 500, 501,
//   505), exactly one Content-Length (none on a 100) and then that many
//   bytes of body, or none (the reply to a HEAD);
// - nothing follows a reply that says "Connection: close";
// - the server is there for the next input (a crash, or a leak at exit, is
//   the sanitizers' to report).
//
// Build and run: see tests/fuzz/README.md.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <launchpad/detail/serve/exchange.hpp>
#include <launchpad/detail/serve/listener.hpp>
// Built from the headers alone (tests/fuzz/meson.build): the compiled part
// the headers above declare comes, inline, with launch.hpp.
#include <launchpad/launch.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

bool verbose() {
  static const bool on = std::getenv("LP_FUZZ_VERBOSE") != nullptr;
  return on;
}

[[noreturn]] void violated(const char* what, std::string_view reply = {}) {
  if (verbose())
    std::fprintf(stderr, "lp fuzz_server: invariant violated: %s\nreply: %.*s\n", what,
                 static_cast<int>(std::min<std::size_t>(reply.size(), 2000)),
                 reply.data());
  __builtin_trap();
}

// One server for the whole run: starting one per input would measure
// thread starts, not parsing.
int server_port() {
  static lp::detail::listener server = [] {
    lp::detail::server_limits limits;
    // Longer than the harness waits: an input that makes the server wait one
    // out fails the 3 s bound below instead of passing as a 408.
    limits.header_timeout = limits.read_timeout = limits.write_timeout = 10s;
    return lp::detail::listener(limits);
  }();
  static const int port = [] {
    using lp::detail::http_reply;
    using lp::detail::http_request;
    auto& routes = server.routes();
    routes.get("/hello", [](const http_request&, http_reply& reply) {
      reply.set_content("hello", "text/plain");
    });
    routes.post("/echo", [](const http_request& request, http_reply& reply) {
      reply.set_content(std::string(request.body), "application/octet-stream");
    });
    routes.post_under("/under/", [](const http_request& request, http_reply& reply) {
      reply.set_content(std::string(request.rest), "text/plain");
    });
    routes.post("/throw", [](const http_request&, http_reply&) {
      throw std::runtime_error("a handler that throws");
    });
    server.set_body_limit(4096);
    int bound = server.start("127.0.0.1", 0);
    if (bound < 0) violated("the server cannot bind 127.0.0.1");
    return bound;
  }();
  return port;
}

// Sends `input` and reads the replies until the server closes; false if it
// reset the connection (what it sent may then be cut short).
bool exchange(int port, std::string_view input, std::string& replies) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) violated("no socket");
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 &&
      errno != EINPROGRESS)
    violated("cannot connect to the server");
  auto until = clock_type::now() + 3s;
  bool half_closed = false, reset = false;
  char buffer[16 << 10];
  for (;;) {
    if (!half_closed && input.empty()) {
      ::shutdown(fd, SHUT_WR);
      half_closed = true;
    }
    pollfd watched{fd, static_cast<short>(POLLIN | (half_closed ? 0 : POLLOUT)), 0};
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
    if (left <= 0ms)
      violated("the server did not close within 3 s of the peer's end", replies);
    ::poll(&watched, 1, static_cast<int>(left.count()));
    if (!half_closed && (watched.revents & POLLOUT)) {
      ssize_t sent = ::send(fd, input.data(), input.size(), MSG_NOSIGNAL);
      if (sent > 0) input.remove_prefix(static_cast<std::size_t>(sent));
      // The server refused and closed: the rest of the input goes nowhere.
      if (sent < 0 && errno != EAGAIN) input = {};
    }
    if (watched.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got > 0) {
        replies.append(buffer, static_cast<std::size_t>(got));
        continue;
      }
      if (got == 0) break;
      if (errno != EAGAIN && errno != EINTR) {
        reset = true;
        break;
      }
    }
  }
  ::close(fd);
  return !reset;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

// Checks the replies' framing, independently of the server's own parser.
void check_replies(std::string_view replies, bool whole) {
  std::string_view all = replies;
  while (!replies.empty()) {
    auto end = replies.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (whole) violated("a reply's head does not end", all);
      return;
    }
    auto head = replies.substr(0, end + 2);
    replies.remove_prefix(end + 4);
    if (!head.starts_with("HTTP/1.1 ") || head.size() < 14 || head[12] != ' ')
      violated("a reply does not start with 'HTTP/1.1 NNN '", all);
    int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    switch (status) {
      case 100:
      case 200:
      case 400:
      case 404:
      case 413:
      case 417:
      case 431:
      case 500:
      case 501:
      case 505:
        break;
      default:
        violated("a status this server does not give", all);
    }
    int lengths = 0;
    std::size_t length = 0;
    bool close = false;
    for (auto rest = head.substr(head.find("\r\n") + 2); !rest.empty();) {
      auto line = rest.substr(0, rest.find("\r\n"));
      rest.remove_prefix(line.size() + 2);
      auto colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0)
        violated("a malformed field", all);
      auto name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (iequals(name, "Content-Length")) {
        ++lengths;
        if (value.empty() ||
            value.find_first_not_of("0123456789") != std::string_view::npos)
          violated("a Content-Length that is not a number", all);
        length = std::strtoull(std::string(value).c_str(), nullptr, 10);
      }
      if (iequals(name, "Connection") && iequals(value, "close")) close = true;
    }
    if (status == 100) {
      if (lengths != 0) violated("a 100 Continue with a Content-Length", all);
      continue;
    }
    if (lengths != 1) violated("a reply without exactly one Content-Length", all);
    // The body, unless this answered a HEAD: then the next reply, or nothing.
    bool next_or_end_at_once = replies.empty() || replies.starts_with("HTTP/1.1 ");
    if (replies.size() >= length &&
        (replies.size() == length || replies.substr(length).starts_with("HTTP/1.1 ")))
      replies.remove_prefix(length);
    else if (!next_or_end_at_once && whole)
      violated("a reply's body is not its Content-Length", all);
    else if (!next_or_end_at_once)
      return;
    if (close && !replies.empty()) violated("bytes after 'Connection: close'", all);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string replies;
  bool whole =
      exchange(server_port(), std::string_view(reinterpret_cast<const char*>(data), size),
               replies);
  if (size == 0 && !replies.empty()) violated("a reply to nothing", replies);
  check_replies(replies, whole);
  return 0;
}
