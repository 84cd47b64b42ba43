// Calls between processes of one host: a node's unix socket in the launch's
// run directory (docs/protocol.md, "On one host"), as its callers and curl
// reach it.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <memory>
#include <string>

#include "command.hpp"
#include "services.hpp"

namespace local {
using namespace std::chrono_literals;
using lp::detail::http_connection;
constexpr const char* secret = "0123456789abcdef0123456789abcdef";

// A program of one counter, hosted in this process with its socket in
// `dir` (`socket_dir` in host_options, as a launch on one host sets it).
struct hosted {
  // The node "counter", or "<group>/0".
  explicit hosted(const std::string& dir, const std::string& group = "")
      : graph("local") {
    if (group.empty())
      graph.add_node<t::Counter>("counter");
    else
      graph.group(group).add_node<t::Counter>();
    lp::detail::host_options options;
    options.policy = lp::detail::policy_kind::test_mt;
    options.secret = secret;
    options.socket_dir = dir;
    options.stop_when_runs_finish = false;
    host = std::make_unique<lp::detail::node_host>(graph, std::move(options));
  }
  lp::program graph;
  std::unique_ptr<lp::detail::node_host> host;
};

// One POST over a connection; the status and body.
std::pair<int, std::string> post(http_connection& connection, const std::string& path,
                                 const std::string& body, const std::string& headers) {
  std::string buffer;
  auto reply = connection.post(path, headers + "Content-Type: application/json\r\n", body,
                               http_connection::clock::now() + 10s, buffer, 1 << 20);
  return {reply.status, buffer.substr(0, reply.body_size)};
}

std::string bearer() {
  return std::string("Authorization: Bearer ") + secret + "\r\n";
}

// The arguments (1) as a call's CBOR body.
std::string one() {
  std::string body;
  lp::detail::cbor::head(body, 4, 1);
  lp::detail::cbor::write(body, 1L);
  return body;
}

// add(1) through an http_channel to the node at `where`.
long add_through(const lp::detail::address& where) {
  auto directory = std::make_shared<lp::detail::local_directory>();
  directory->publish("counter", where);
  lp::detail::http_channel channel("counter", directory, {secret, nullptr});
  auto body = one();
  std::string_view piece = body;
  auto reply = channel.call("add", {&piece, 1}, {},
                            lp::detail::call_deadline::from_now(10s), nullptr);
  return lp::detail::read_result<long>("counter", "add", reply);
}
}  // namespace local

TEST_SUITE("local") {
  using namespace std::chrono_literals;
  using lp::detail::http_connection;

  TEST_CASE("a node serves on a unix socket of its user's, with the same protocol") {
    test_process::scratch dir;
    REQUIRE(::chmod(dir.path.c_str(), 0700) == 0);
    local::hosted node(dir.path);
    auto path = dir.path + "/counter.sock";
    struct stat socket {};
    REQUIRE(::stat(path.c_str(), &socket) == 0);
    CHECK(S_ISSOCK(socket.st_mode));
    CHECK((socket.st_mode & 0777) == 0600);

    auto connection =
        http_connection::open_local(path, std::chrono::steady_clock::now() + 5s);
    auto [status, body] =
        local::post(*connection, "/lp/v1/call/add", "[2]", local::bearer());
    CHECK(status == 200);
    CHECK(body == R"({"result":2})");
    // The same errors as over TCP: the secret, then the method.
    auto refused = local::post(*connection, "/lp/v1/call/add", "[2]", "");
    CHECK(refused.first == 401);
    CHECK(refused.second.find("unauthenticated") != std::string::npos);
    auto missing = local::post(*connection, "/lp/v1/call/nope", "[]", local::bearer());
    CHECK(missing.first == 404);
    CHECK(missing.second.find("no_such_method") != std::string::npos);

    // Gone with the node.
    node.host->shutdown();
    CHECK_FALSE(std::filesystem::exists(path));
  }

  TEST_CASE("curl --unix-socket reaches a node") {
    if (std::system("curl --version > /dev/null 2>&1") != 0) {
      MESSAGE("skipped: no curl (apt-get install curl)");
      return;
    }
    test_process::scratch dir;
    local::hosted node(dir.path, "actors");
    // A label's '/' is written %2F in the socket's name.
    auto path = dir.path + "/actors%2F0.sock";
    REQUIRE(std::filesystem::exists(path));
    test_process::command curl({"/usr/bin/curl", "-s", "--unix-socket", path, "-H",
                                std::string("Authorization: Bearer ") + local::secret,
                                "-d", "[5]", "http://localhost/lp/v1/call/add"});
    REQUIRE(curl.exit_code(30s) == 0);
    CHECK(curl.output() == R"({"result":5})");
    test_process::command stranger({"/usr/bin/curl", "-s", "-o", "/dev/null", "-w",
                                    "%{http_code}", "--unix-socket", path, "-d", "[5]",
                                    "http://localhost/lp/v1/call/add"});
    REQUIRE(stranger.exit_code(30s) == 0);
    CHECK(stranger.output() == "401");
  }

  TEST_CASE("a caller takes the socket on its own host only, and TCP elsewhere") {
    test_process::scratch dir;
    local::hosted node(dir.path);
    auto path = dir.path + "/counter.sock";
    lp::detail::address where;
    where.host = "127.0.0.1";
    where.port = std::stoi(node.host->urls().at("counter").substr(17));
    where.socket = path;
    where.host_id = lp::detail::host_identity();
    REQUIRE_FALSE(where.host_id.empty());
    CHECK(local::add_through(where) == 1);  // the socket, or TCP: both serve

    // With no TCP port to fall back on, only the socket can answer.
    auto socket_only = where;
    socket_only.port = 1;
    CHECK(local::add_through(socket_only) == 2);
    // Another host's socket (another network namespace's, say) is not
    // tried, though its path is there: the call goes to host:port.
    auto elsewhere = socket_only;
    elsewhere.host_id = "another-boot/4026531840:1";
    CHECK_THROWS_AS(local::add_through(elsewhere), lp::transport_error);
    // A socket that is gone: TCP, said once.
    auto stale = where;
    stale.socket = dir.path + "/gone.sock";
    CHECK(local::add_through(stale) == 3);
  }

  TEST_CASE("a socket's path too long for sockaddr_un goes through its directory") {
    test_process::scratch dir;
    auto deep = dir.path + "/" + std::string(60, 'd') + "/" + std::string(60, 'e');
    std::filesystem::create_directories(deep);
    local::hosted node(deep);
    auto path = deep + "/counter.sock";
    REQUIRE(path.size() > 108);
    REQUIRE(std::filesystem::exists(path));
    auto connection =
        http_connection::open_local(path, std::chrono::steady_clock::now() + 5s);
    CHECK(local::post(*connection, "/lp/v1/call/add", "[7]", local::bearer()).first ==
          200);
  }

  TEST_CASE("an earlier life's socket is replaced; any other file is not") {
    test_process::scratch dir;
    auto path = dir.path + "/counter.sock";
    {
      int fd = lp::detail::listen_unix(path);
      REQUIRE(fd >= 0);
      ::close(fd);  // a node killed before it removed its socket
    }
    {
      local::hosted node(dir.path);
      auto connection =
          http_connection::open_local(path, std::chrono::steady_clock::now() + 5s);
      CHECK(local::post(*connection, "/lp/v1/call/add", "[1]", local::bearer()).first ==
            200);
    }
    std::ofstream(path) << "not a socket";
    CHECK_THROWS_WITH_AS(local::hosted(dir.path),
                         doctest::Contains("cannot listen on the unix socket"),
                         lp::bind_error);
    CHECK(std::filesystem::is_regular_file(path));
  }

  TEST_CASE("the host's identity: this kernel's boot and network namespace") {
    const auto& id = lp::detail::host_identity();
    std::string boot;
    std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
    CHECK(id.starts_with(boot + "/"));
    CHECK(lp::detail::socket_file_name("learner") == "learner.sock");
    CHECK(lp::detail::socket_file_name("actors/12") == "actors%2F12.sock");
    CHECK(lp::detail::socket_file_name("..") == "%2E..sock");
  }
}

// Bulk data through shared memory (docs/protocol.md, "Bulk data through
// shared memory"): a node and its caller in this process, over the node's
// unix socket, with the process's one pool of segments.
namespace bulk {
struct Echo {
  std::vector<float> echo(std::vector<float> values) { return values; }
  lp::tensor<float> echo_tensor(lp::tensor<float> values) { return values; }
  bool in_place(lp::tensor<float> values) { return values.in_shared_memory(); }
  // Keeps what it was sent, as a replay buffer does.
  void store(lp::tensor<float> values) { stored.push_back(std::move(values)); }
  float stored_first(int i) { return stored.at(static_cast<std::size_t>(i))[0]; }
  std::vector<lp::tensor<float>> stored;
};
}  // namespace bulk
LP_SERVICE(bulk::Echo, echo, echo_tensor, in_place, store, stored_first);

namespace bulk {
using lp::detail::segment_pool;

struct hosted {
  explicit hosted(const std::string& dir) : graph("bulk") {
    node = graph.add_node<Echo>("echo");
    lp::detail::host_options options;
    options.policy = lp::detail::policy_kind::test_mt;
    options.secret = local::secret;
    options.socket_dir = dir;
    options.stop_when_runs_finish = false;
    host = std::make_unique<lp::detail::node_host>(graph, std::move(options));
  }
  lp::client<Echo> client() {
    return lp::detail::client_access::make<Echo>(host->connect("echo"));
  }
  lp::program graph;
  lp::handle<Echo> node;
  std::unique_ptr<lp::detail::node_host> host;
};

std::vector<float> counting(std::size_t n, float from = 0) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = from + static_cast<float>(i);
  return out;
}
}  // namespace bulk

TEST_SUITE("local") {
  TEST_CASE(
      "large arrays cross through shared memory, whose segments go back and are reused") {
    test_process::scratch dir;
    bulk::hosted node(dir.path);
    auto echo = node.client();
    auto& pool = bulk::segment_pool::of_process();
    auto before = pool.counts();
    auto values = bulk::counting(1 << 20);
    CHECK(echo.echo(values) == values);
    auto first = pool.counts();
    // The first call on a connection learns that the node reads segments;
    // from the second on, both ways go through them.
    CHECK(echo.echo(values) == values);
    // The node counts its reply's segment once it has sent it, which may be
    // after this caller has it.
    auto lent_at_least = [&](std::uint64_t n) {
      return test_process::eventually([&] { return pool.counts().lent >= n; },
                                      std::chrono::seconds(5));
    };
    CHECK(lent_at_least(first.lent + 2));
    auto second = pool.counts();
    for (int i = 0; i < 20; ++i) REQUIRE(echo.echo(values) == values);
    CHECK(lent_at_least(second.lent + 40));
    auto later = pool.counts();
    // Every segment came back: none made anew, none kept by the other end.
    CHECK(later.bytes == second.bytes);
    CHECK(later.given_away == before.given_away);
    CHECK(later.fallbacks == before.fallbacks);
    // Small arrays stay in the body.
    auto small = bulk::counting(100);
    CHECK(echo.echo(small) == small);
    // The last reply counted.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto settled = pool.counts().lent;
    CHECK(echo.echo(small) == small);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(pool.counts().lent == settled);
  }

  TEST_CASE("a tensor reads shared memory in place; one kept is never written again") {
    test_process::scratch dir;
    bulk::hosted node(dir.path);
    auto echo = node.client();
    auto& pool = bulk::segment_pool::of_process();
    lp::tensor<float> sent({1024, 256}, bulk::counting(1 << 18));
    echo.echo_tensor(sent);  // the connection learns the node takes segments
    CHECK(echo.in_place(sent));
    {
      auto back = echo.echo_tensor(sent);
      CHECK(back.in_shared_memory());
      CHECK(back == sent);
      // A copy holds its own values; the original reads on in place.
      auto copy = back;
      CHECK_FALSE(copy.in_shared_memory());
      copy[0] = -1;
      CHECK(back[0] == 0);
      // Writable in place, as any tensor's values are.
      back[1] = 42;
      CHECK(std::as_const(back)[1] == 42);
      // The reply's segment is still this caller's: the next call, which
      // cannot give it back, gives it away.
      auto away = pool.counts().given_away;
      CHECK(echo.echo(bulk::counting(1 << 16)).size() == 1 << 16);
      CHECK(pool.counts().given_away == away + 1);
      CHECK(back[1] == 42);  // and nobody wrote it
      CHECK(back[2] == 2);
    }
    // A node that stores what it was sent keeps the caller's segment: the
    // caller makes another for its next call and never writes that one
    // again.
    echo.store(lp::tensor<float>({1 << 18}, bulk::counting(1 << 18, 1000)));
    echo.store(lp::tensor<float>({1 << 18}, bulk::counting(1 << 18, 2000)));
    for (int i = 0; i < 5; ++i) echo.echo_tensor(sent);
    CHECK(echo.stored_first(0) == 1000);
    CHECK(echo.stored_first(1) == 2000);
  }
}

namespace bulk {
// A request to the node's socket, with `fds` sent along (SCM_RIGHTS) and
// `fields` among its head's lines; the reply's status line and body.
std::pair<std::string, std::string> raw_call(const std::string& socket_path,
                                             const std::string& fields,
                                             const std::string& body,
                                             const std::vector<int>& fds,
                                             bool with_secret = true) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  lp::detail::unix_address where(socket_path);
  REQUIRE(::connect(fd, where.get(), where.size()) == 0);
  timeval limit{15, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string request = "POST /lp/v1/call/echo HTTP/1.1\r\nHost: localhost\r\n" + fields +
                        "Content-Type: application/cbor\r\n";
  if (with_secret)
    request += std::string("Authorization: Bearer ") + local::secret + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  iovec piece{request.data(), request.size()};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  std::vector<char> control(
      CMSG_SPACE(sizeof(int) * std::max<std::size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    message.msg_control = control.data();
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    auto* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  REQUIRE(::sendmsg(fd, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  std::string got;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
    got.append(buffer, static_cast<std::size_t>(n));
    auto end = got.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    auto length_at = got.find("Content-Length: ");
    REQUIRE(length_at != std::string::npos);
    auto length = std::stoul(got.substr(length_at + 16));
    if (got.size() >= end + 4 + length) break;
  }
  ::close(fd);
  auto end = got.find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  return {got.substr(0, got.find("\r\n")), got.substr(end + 4)};
}

// A memfd of `size` bytes, each byte `fill`, sealed against shrinking
// unless not `sealed`.
int memfd(std::size_t size, bool sealed = true) {
  int fd = ::memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  if (sealed) REQUIRE(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
  return fd;
}

// The CBOR body [tag 85 (float32) on a reference [segment, offset, length]].
std::string reference_body(std::uint64_t segment, std::uint64_t offset,
                           std::uint64_t length) {
  using lp::detail::cbor::head;
  std::string body;
  head(body, 4, 1);
  head(body, 6, lp::detail::typed_array::native_tag<float>);
  head(body, 6, lp::detail::cbor::shared_bytes_tag);
  head(body, 4, 3);
  head(body, 0, segment);
  head(body, 0, offset);
  head(body, 0, length);
  return body;
}

// The descriptors open in this process.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}
}  // namespace bulk

TEST_SUITE("local") {
  TEST_CASE("segments that are not what they should be get 400, and are closed") {
    test_process::scratch dir;
    bulk::hosted node(dir.path);
    auto path = dir.path + "/echo.sock";
    auto baseline = bulk::open_descriptors();
    auto refused = [&](const std::string& fields, const std::string& body,
                       std::vector<int> fds, const std::string& part,
                       std::string status = "HTTP/1.1 400 Bad Request") {
      // Not a structured binding: clang++ 14 cannot capture one (INFO).
      auto reply = bulk::raw_call(path, fields, body, fds);
      const std::string& text = reply.second;
      for (int fd : fds) ::close(fd);
      CHECK(reply.first == status);
      INFO(text);
      CHECK(text.find(part) != std::string::npos);
    };
    // A reference with no segment, or to one the message did not bring.
    refused("", bulk::reference_body(0, 0, 16), {}, "brought no segment");
    refused("Lp-Segments: 1\r\n", bulk::reference_body(1, 0, 16), {bulk::memfd(4096)},
            "a reference to segment 1 of a message that brought 1");
    // Past the segment's end, or wrapping around.
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 4000, 100), {bulk::memfd(4096)},
            "a reference to bytes 4000 to 4000 + 100 of a segment of 4096 bytes");
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 8, ~std::uint64_t{0} - 4),
            {bulk::memfd(4096)}, "of a segment of 4096 bytes");
    // Not the descriptors the head announced.
    refused("Lp-Segments: 2\r\n", bulk::reference_body(0, 0, 16), {bulk::memfd(4096)},
            "announced 2 segments (Lp-Segments) and brought 1");
    refused("", bulk::reference_body(0, 0, 16), {bulk::memfd(4096)},
            "announced 0 segments (Lp-Segments) and brought 1");
    refused("Lp-Segments: lots\r\n", bulk::reference_body(0, 0, 16), {bulk::memfd(4096)},
            "Lp-Segments is not a count");
    // Not segments: a regular file, a pipe, a memfd that may shrink, an
    // empty one, one over the node's body limit.
    test_process::scratch files;
    std::ofstream(files.path + "/plain") << std::string(4096, 'x');
    int plain = ::open((files.path + "/plain").c_str(), O_RDONLY | O_CLOEXEC);
    // A file on tmpfs (a /tmp many systems mount so) takes seals as a memfd
    // does, none of them set: it is refused as unsealed.
    bool takes_seals = ::fcntl(plain, F_GET_SEALS) >= 0;
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 0, 16), {plain},
            takes_seals ? "not sealed against shrinking" : "not a memfd");
    int ends[2];
    REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
    ::close(ends[1]);
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 0, 16), {ends[0]},
            "not a memfd");
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 0, 16),
            {bulk::memfd(4096, false)}, "not sealed against shrinking");
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 0, 0), {bulk::memfd(0)},
            "an empty one holds nothing");
    refused("Lp-Segments: 1\r\n", bulk::reference_body(0, 0, 16),
            {bulk::memfd(std::size_t{257} << 20)}, "this end takes at most");
    // More descriptors than a message may bring.
    std::vector<int> many;
    for (int i = 0; i < 20; ++i) many.push_back(bulk::memfd(4096));
    refused("Lp-Segments: 16\r\n", bulk::reference_body(0, 0, 16), many,
            "more descriptors came than a message may bring");
    // The reference's tag where a typed array's should be is no typed array.
    std::string wrong;
    lp::detail::cbor::head(wrong, 4, 1);
    lp::detail::cbor::head(wrong, 6, lp::detail::cbor::shared_bytes_tag);
    lp::detail::cbor::head(wrong, 2, 4);
    wrong += "abcd";
    refused("", wrong, {}, "got byte string of 4 bytes tagged 19536");
    // A reference that is not [segment, offset, length].
    std::string odd;
    lp::detail::cbor::head(odd, 4, 1);
    lp::detail::cbor::head(odd, 6, lp::detail::typed_array::native_tag<float>);
    lp::detail::cbor::head(odd, 6, lp::detail::cbor::shared_bytes_tag);
    lp::detail::cbor::head(odd, 4, 2);
    lp::detail::cbor::head(odd, 0, 0);
    lp::detail::cbor::head(odd, 0, 0);
    refused("Lp-Segments: 1\r\n", odd, {bulk::memfd(4096)},
            "a reference to shared memory is an array of 3 unsigned integers");
    // Without the secret, 401 first, whatever came with it.
    {
      int fd = bulk::memfd(4096);
      auto [line, text] = bulk::raw_call(path, "Lp-Segments: 1\r\n",
                                         bulk::reference_body(0, 0, 16), {fd}, false);
      ::close(fd);
      CHECK(line == "HTTP/1.1 401 Unauthorized");
    }
    // A good one, after all that: the node serves on.
    {
      int fd = bulk::memfd(4096);
      auto [line, text] = bulk::raw_call(path, "Lp-Segments: 1\r\n",
                                         bulk::reference_body(0, 64, 16), {fd});
      ::close(fd);
      CHECK(line == "HTTP/1.1 200 OK");
    }
    // None of the descriptors that came is still open here.
    CHECK(test_process::eventually([&] { return bulk::open_descriptors() <= baseline; },
                                   std::chrono::seconds(5)));
  }
}
