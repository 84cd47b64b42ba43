// The client side of one HTTP/1.1 connection, against httplib's server and
// against raw sockets that misbehave on purpose.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/serve/listener.hpp>
#include <launchpad/detail/util/spin_wait.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace conn {
using lp::detail::http_connection;
using clock = http_connection::clock;
using namespace std::chrono_literals;

constexpr std::size_t unlimited = std::size_t{1} << 30;

clock::time_point in(clock::duration d) {
  return clock::now() + d;
}

std::string pattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return s;
}

// httplib's server on 127.0.0.1: a server other than the library's own, with
// its socket buffers, and an echo at /echo; tests add handlers and settings
// before start().
struct server {
  server() {
    http.set_tcp_nodelay(true);
    http.set_socket_options([](socket_t socket) {
      httplib::default_socket_options(socket);
      for (int option : {SO_SNDBUF, SO_RCVBUF})
        ::setsockopt(socket, SOL_SOCKET, option, &lp::detail::socket_buffer_bytes,
                     sizeof lp::detail::socket_buffer_bytes);
    });
    // Under a sanitizer on a busy machine, checking one 64 MB body and
    // making the next may take longer than httplib's 5 s of keep-alive or
    // of a read: the connection must still be there.
    http.set_read_timeout(60s);
    http.set_keep_alive_timeout(60);
    http.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, req.get_header_value("Content-Type"));
    });
  }
  void start() {
    port = http.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { http.listen_after_bind(); });
    for (int i = 0; i < 500 && !http.is_running(); ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(http.is_running());
  }
  ~server() {
    http.stop();
    if (thread.joinable()) thread.join();
  }
  std::unique_ptr<http_connection> connect() {
    return http_connection::open("127.0.0.1", port, in(5s));
  }
  httplib::Server http;
  std::thread thread;
  int port = 0;
};

int listening_socket(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t size = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  port = ntohs(address.sin_port);
  return fd;
}

// Accepts one connection and answers its requests with `replies`, one each,
// then closes it. With no replies it reads and never answers. An `early`
// server answers as soon as it has a request's head, reading no body.
struct raw_server {
  explicit raw_server(std::vector<std::string> replies, bool early = false)
      : replies_(std::move(replies)), early_(early) {
    listener_ = listening_socket(port);
    thread_ = std::thread([this] { serve(); });
  }
  ~raw_server() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  int port = 0;

 private:
  bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 20) > 0;
  }
  // Reads one request (our client always sends Content-Length); false on
  // stop or EOF.
  bool read_request(int fd, std::string& pending) {
    for (;;) {
      auto end = pending.find("\r\n\r\n");
      if (end != std::string::npos) {
        auto at = pending.find("Content-Length: ");
        std::size_t length =
            at < end && !early_ ? std::stoul(pending.substr(at + 16)) : 0;
        if (pending.size() >= end + 4 + length) {
          pending.erase(0, end + 4 + length);
          return true;
        }
      }
      while (!readable(fd))
        if (stop_) return false;
      char buffer[65536];
      auto got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) return false;
      pending.append(buffer, static_cast<std::size_t>(got));
    }
  }
  void serve() {
    while (!readable(listener_))
      if (stop_) return;
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::string pending;
    for (const auto& reply : replies_) {
      if (!read_request(fd, pending)) break;
      ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
    if (replies_.empty())
      while (!stop_ && read_request(fd, pending)) {
      }
    ::close(fd);
  }
  std::vector<std::string> replies_;
  bool early_;
  int listener_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

// The failure of one POST to `reply` from a raw server.
http_connection::failure failure_of(const std::string& reply,
                                    std::size_t max_body = unlimited) {
  raw_server raw({reply});
  auto c = http_connection::open("127.0.0.1", raw.port, in(5s));
  std::string body;
  try {
    c->post("/x", "", "ping", in(5s), body, max_body);
  } catch (const http_connection::failure& f) {
    CHECK_FALSE(c->reusable());
    return f;
  }
  FAIL("the post succeeded");
  return {http_connection::failure::broken, ""};
}

bool mentions(const std::exception& e, const std::string& part) {
  INFO("message: " << e.what());
  return std::string(e.what()).find(part) != std::string::npos;
}
}  // namespace conn

TEST_SUITE("connection") {
  using namespace conn;
  using failure = http_connection::failure;

  TEST_CASE("a small POST is echoed with its status and content type") {
    server s;
    s.start();
    auto c = s.connect();
    std::string body;
    auto r = c->post("/echo", "Content-Type: application/cbor\r\n", "12345678", in(5s),
                     body, unlimited);
    CHECK(r.status == 200);
    CHECK(r.content_type == "application/cbor");
    REQUIRE(r.body_size == 8);
    CHECK(body.substr(0, r.body_size) == "12345678");
    CHECK(c->reusable());

    SUBCASE("the buffer is neither shrunk nor cleared") {
      std::string large(100, 'x');
      auto again = c->post("/echo", "Content-Type: text/plain\r\n", "abc", in(5s), large,
                           unlimited);
      CHECK(again.content_type == "text/plain");
      CHECK(again.body_size == 3);
      CHECK(large == "abc" + std::string(97, 'x'));
    }
    SUBCASE("an empty body both ways") {
      auto empty = c->post("/echo", "", "", in(5s), body, unlimited);
      CHECK(empty.status == 200);
      CHECK(empty.body_size == 0);
    }
    SUBCASE("a missing path is the server's 404, and the connection stays") {
      auto missing = c->post("/nowhere", "", "x", in(5s), body, unlimited);
      CHECK(missing.status == 404);
      CHECK(c->reusable());
    }
  }

  TEST_CASE("4 MB and 64 MB bodies go both ways") {
    server s;
    s.start();
    auto c = s.connect();
    std::string body;
    for (std::size_t size : {std::size_t{4} << 20, std::size_t{64} << 20}) {
      CAPTURE(size);
      auto sent = pattern(size);
      auto r = c->post("/echo", "Content-Type: application/octet-stream\r\n", sent,
                       in(60s), body, unlimited);
      CHECK(r.status == 200);
      REQUIRE(r.body_size == size);
      CHECK(std::string_view(body).substr(0, size) == sent);
      CHECK(c->reusable());
    }
  }

  TEST_CASE("a body in pieces arrives whole, small or large") {
    server s;
    s.start();
    auto c = s.connect();
    std::string body;
    auto large = pattern(std::size_t{3} << 20);
    for (std::size_t middle : {std::size_t{10}, large.size()}) {
      CAPTURE(middle);
      std::string_view pieces[] = {"head-", std::string_view(large).substr(0, middle), "",
                                   "-tail"};
      auto r = c->post("/echo", "Content-Type: application/octet-stream\r\n", pieces,
                       in(60s), body, unlimited);
      CHECK(r.status == 200);
      REQUIRE(r.body_size == middle + 10);
      CHECK(std::string_view(body).substr(0, r.body_size) ==
            "head-" + large.substr(0, middle) + "-tail");
      CHECK(c->reusable());
    }
  }

  TEST_CASE("one connection serves 100 requests in a row") {
    std::vector<int> ports;
    server s;
    s.http.set_keep_alive_max_count(1000);
    s.http.Post("/port", [&](const httplib::Request& req, httplib::Response& res) {
      ports.push_back(req.remote_port);
      res.set_content(req.body, "text/plain");
    });
    s.start();
    auto c = s.connect();
    std::string body;
    for (int i = 0; i < 100; ++i) {
      auto sent = std::to_string(i) + pattern(static_cast<std::size_t>(i) * 1000);
      auto r = c->post("/port", "", sent, in(5s), body, unlimited);
      REQUIRE(r.status == 200);
      REQUIRE(body.substr(0, r.body_size) == sent);
      REQUIRE(c->reusable());
    }
    REQUIRE(ports.size() == 100);
    CHECK(std::count(ports.begin(), ports.end(), ports[0]) == 100);
  }

  TEST_CASE("a chunked response is decoded") {
    // Before the server: its threads may still send it after a client quits.
    const auto whole = pattern(3 << 20);
    server s;
    s.http.Post("/chunked", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider(
          "application/json", [&](std::size_t offset, httplib::DataSink& sink) {
            // Chunks of growing size, a large one among them.
            std::size_t size =
                std::min(whole.size() - offset, offset < 1000 ? 7 : offset + 1);
            sink.write(whole.data() + offset, size);
            if (offset + size == whole.size()) sink.done();
            return true;
          });
    });
    s.start();
    auto c = s.connect();
    std::string body;
    for (int i = 0; i < 2; ++i) {
      auto r = c->post("/chunked", "", "", in(30s), body, unlimited);
      CHECK(r.status == 200);
      CHECK(r.content_type == "application/json");
      REQUIRE(r.body_size == whole.size());
      CHECK(std::string_view(body).substr(0, r.body_size) == whole);
      CHECK(c->reusable());
    }
    SUBCASE("a chunked body over the limit is not read") {
      try {
        c->post("/chunked", "", "", in(30s), body, 1 << 20);
        FAIL("no failure");
      } catch (const failure& f) {
        CHECK(f.kind == failure::broken);
        CHECK(mentions(f, "larger than"));
      }
      CHECK_FALSE(c->reusable());
    }
  }

  TEST_CASE("a body without length ends with the connection") {
    server s;
    // httplib leaves such a response's connection open until its keep-alive
    // timeout, though nothing else can frame the body.
    s.http.set_keep_alive_timeout(1);
    s.http.Post("/unsized", [](const httplib::Request&, httplib::Response& res) {
      res.set_content_provider("text/plain",
                               [](std::size_t offset, httplib::DataSink& sink) {
                                 if (offset < 100000)
                                   return sink.write(std::string(1000, 'u').data(), 1000);
                                 sink.done();
                                 return true;
                               });
    });
    s.start();
    auto c = s.connect();
    std::string body;
    auto r = c->post("/unsized", "", "", in(10s), body, unlimited);
    CHECK(r.status == 200);
    CHECK(r.body_size == 100000);
    CHECK(body.substr(0, r.body_size) == std::string(100000, 'u'));
    CHECK_FALSE(c->reusable());
  }

  TEST_CASE("Connection: close from the server ends reuse") {
    server s;
    s.http.set_keep_alive_max_count(2);
    s.start();
    auto c = s.connect();
    std::string body;
    c->post("/echo", "", "1", in(5s), body, unlimited);
    CHECK(c->reusable());
    auto r = c->post("/echo", "", "2", in(5s), body, unlimited);
    CHECK(r.status == 200);
    CHECK(body.substr(0, r.body_size) == "2");
    CHECK_FALSE(c->reusable());
    try {
      c->post("/echo", "", "3", in(5s), body, unlimited);
      FAIL("a closed connection carried a request");
    } catch (const failure& f) {
      CHECK(f.kind == failure::broken);
    }
  }

  TEST_CASE("a connection the server closed while idle fails as stale") {
    server s;
    s.http.set_keep_alive_timeout(1);
    s.start();
    auto c = s.connect();
    std::string body;
    c->post("/echo", "", "before", in(5s), body, unlimited);
    REQUIRE(c->reusable());
    std::this_thread::sleep_for(1500ms);
    try {
      c->post("/echo", "", "after", in(5s), body, unlimited);
      FAIL("the idle connection still worked");
    } catch (const failure& f) {
      CHECK(f.kind == failure::stale);
    }
    CHECK_FALSE(c->reusable());
    // A large request on a stale connection is stale too.
    auto d = s.connect();
    d->post("/echo", "", "before", in(5s), body, unlimited);
    std::this_thread::sleep_for(1500ms);
    try {
      d->post("/echo", "", pattern(8 << 20), in(5s), body, unlimited);
      FAIL("the idle connection still worked");
    } catch (const failure& f) {
      CHECK(f.kind == failure::stale);
    }
  }

  TEST_CASE("a server that never answers times out by the deadline") {
    raw_server silent({});
    auto c = http_connection::open("127.0.0.1", silent.port, in(5s));
    std::string body;
    auto start = clock::now();
    try {
      c->post("/x", "", "ping", start + 300ms, body, unlimited);
      FAIL("no timeout");
    } catch (const failure& f) {
      CHECK(f.kind == failure::timeout);
    }
    auto took = clock::now() - start;
    CHECK(took >= 300ms);
    CHECK(took < 5s);  // the silent server would have kept it forever
    CHECK_FALSE(c->reusable());
  }

  TEST_CASE("a deadline already past fails before sending") {
    raw_server silent({});
    auto c = http_connection::open("127.0.0.1", silent.port, in(5s));
    std::string body;
    try {
      c->post("/x", "", "ping", clock::now() - 1ms, body, unlimited);
      FAIL("no timeout");
    } catch (const failure& f) {
      CHECK(f.kind == failure::timeout);
    }
  }

  TEST_CASE("connecting to a closed port is refused") {
    int port = 0;
    ::close(listening_socket(port));
    try {
      http_connection::open("127.0.0.1", port, in(5s));
      FAIL("connected");
    } catch (const failure& f) {
      CHECK(f.kind == failure::refused);
      CHECK(mentions(f, "refused"));
    }
  }

  TEST_CASE("a host name is resolved") {
    server s;
    s.start();
    auto c = http_connection::open("localhost", s.port, in(5s));
    std::string body;
    // localhost may resolve to ::1 first, where nothing listens: then
    // 127.0.0.1 is tried.
    CHECK(c->post("/echo", "", "x", in(5s), body, unlimited).status == 200);
  }

  TEST_CASE("malformed responses are broken, saying what was wrong") {
    auto check = [](const std::string& reply, const std::string& said) {
      CAPTURE(reply);
      auto f = failure_of(reply);
      CHECK(f.kind == failure::broken);
      CHECK(mentions(f, said));
    };
    check("hello\r\n\r\n", "malformed status line");
    check("HTTP/2 200 OK\r\n\r\n", "malformed status line");
    check("HTTP/1.1 20 OK\r\n\r\n", "malformed status line");
    check("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "7 bytes before the end");
    check("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", "bad Content-Length");
    check("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length");
    check("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
          "bad Content-Length");
    check("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
          "two different Content-Length");
    check("HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n",
          "malformed header line");
    check("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabcd", "2 bytes after the end");
    check("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "Transfer-Encoding");
    check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
          "bad chunk size");
    check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
          "longer than its declared size");
    check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
          "overflows");
    check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
          "before the end");
    check("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n" + std::string(70000, 'h'),
          "exceeds 64 KiB");
    check("HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols");
    check("", "before responding");  // closed at once, on a fresh connection
  }

  // A node's reply {"result": typed array of `count` elements tagged
  // `tag`}, with `extra` bytes after it, as a whole HTTP response.
  std::string typed_result_response(
      std::size_t count, std::size_t element, int tag, int status = 200,
      const std::string& type = "application/cbor", std::size_t extra = 0) {
    std::string body = "\xa1\x66result";
    body += '\xd8';
    body += static_cast<char>(tag);
    std::size_t length = count * element;
    body += '\x5a';
    for (int shift = 24; shift >= 0; shift -= 8)
      body += static_cast<char>((length >> shift) & 0xff);
    for (std::size_t i = 0; i < count; ++i) {
      float value = static_cast<float>(i) * 0.5f;
      char bytes[8] = {};
      std::memcpy(bytes, &value, sizeof value);
      body.append(bytes, element);
    }
    body.append(extra, 'x');
    return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  TEST_CASE("a large result of numbers is read straight into its vector") {
    using sink_t = lp::detail::placed_vector<std::vector<float>>;
    constexpr std::size_t count = 1 << 20;  // 4 MB of float32
    constexpr int float32 = 85;             // RFC 8746: float32, little-endian
    struct outcome {
      http_connection::response response;
      std::string body;
      std::vector<float> placed;
    };
    auto post = [](const std::string& reply) {
      raw_server raw({reply});
      auto c = http_connection::open("127.0.0.1", raw.port, in(10s));
      outcome out;
      sink_t sink;
      out.response = c->post("/x", "", std::span<const std::string_view>(), in(10s),
                             out.body, unlimited, &sink);
      out.placed = std::move(sink.value);
      return out;
    };
    SUBCASE("a typed array of the vector's elements ends in the vector, not the buffer") {
      auto got = post(typed_result_response(count, 4, float32));
      CHECK(got.response.placed);
      CHECK(got.response.body_size == lp::detail::reply_sink::lead_size);
      CHECK(got.body.size() < 1024);  // the buffer never held the body
      REQUIRE(got.placed.size() == count);
      bool all = true;
      for (std::size_t i = 0; i < count; ++i)
        all = all && got.placed[i] == static_cast<float>(i) * 0.5f;
      CHECK(all);
    }
    SUBCASE("anything else is read into the buffer whole, as without a sink") {
      auto whole = [&](const std::string& reply) {
        CAPTURE(reply.substr(0, 80));
        auto got = post(reply);
        CHECK_FALSE(got.response.placed);
        CHECK(got.placed.empty());
        auto body_at = reply.find("\r\n\r\n") + 4;
        CHECK(got.response.body_size == reply.size() - body_at);
        CHECK(std::string_view(got.body).substr(0, got.response.body_size) ==
              std::string_view(reply).substr(body_at));
      };
      whole(
          typed_result_response(count / 2, 8, 86));  // float64: converted by read_result
      whole(typed_result_response(count, 4, float32, 500));
      whole(typed_result_response(count, 4, float32, 200, "application/json"));
      whole(typed_result_response(count, 4, float32, 200, "application/cbor", 1));
      whole(typed_result_response(1000, 4, float32));  // small: not worth a look
    }
    SUBCASE("a connection lost within a placed body fails as broken") {
      auto reply = typed_result_response(count, 4, float32);
      raw_server raw({reply.substr(0, reply.size() / 2)});
      auto c = http_connection::open("127.0.0.1", raw.port, in(10s));
      std::string body;
      sink_t sink;
      try {
        c->post("/x", "", std::span<const std::string_view>(), in(10s), body, unlimited,
                &sink);
        FAIL("the post succeeded");
      } catch (const failure& f) {
        CHECK(f.kind == failure::broken);
        CHECK(mentions(f, "before the end"));
        CHECK(sink.value.size() == count);  // placed, then cut short
      }
      CHECK_FALSE(c->reusable());
    }
  }

  TEST_CASE("a body larger than max_body is refused unread") {
    auto f = failure_of("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n", 1000);
    CHECK(f.kind == failure::broken);
    CHECK(mentions(f, "larger than the limit of 1000"));
    auto unsized = failure_of("HTTP/1.0 200 OK\r\n\r\n" + std::string(1001, 'x'), 1000);
    CHECK(mentions(unsized, "larger than"));
  }

  TEST_CASE("odd but valid responses") {
    std::string body;
    SUBCASE(
        "interim 100 Continue, header names in any case, chunk extensions and trailers") {
      raw_server raw(
          {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-TYPE:text/x \r\n"
           "TRANSFER-encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\n1\r\ne\r\n0\r\n"
           "Trailer-One: x\r\n\r\n",
           "HTTP/1.1 204 No Content\r\nCONNECTION: Close\r\n\r\n"});
      auto c = http_connection::open("127.0.0.1", raw.port, in(5s));
      auto r = c->post("/x", "", "ping", in(5s), body, unlimited);
      CHECK(r.status == 200);
      CHECK(r.content_type == "text/x");
      CHECK(body.substr(0, r.body_size) == "abcde");
      CHECK(c->reusable());
      auto none = c->post("/x", "", "ping", in(5s), body, unlimited);
      CHECK(none.status == 204);
      CHECK(none.body_size == 0);
      CHECK_FALSE(c->reusable());
    }
    SUBCASE("HTTP/1.0 keeps the connection only if asked to") {
      raw_server raw(
          {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
           "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nno"});
      auto c = http_connection::open("127.0.0.1", raw.port, in(5s));
      CHECK(c->post("/x", "", "", in(5s), body, unlimited).body_size == 2);
      CHECK(c->reusable());
      CHECK(c->post("/x", "", "", in(5s), body, unlimited).body_size == 2);
      CHECK(body.substr(0, 2) == "no");
      CHECK_FALSE(c->reusable());
    }
    SUBCASE("a status line without reason phrase") {
      raw_server raw({"HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n"});
      auto c = http_connection::open("127.0.0.1", raw.port, in(5s));
      CHECK(c->post("/x", "", "", in(5s), body, unlimited).status == 503);
    }
  }

  TEST_CASE("a body too large for the server gets its 413, not a hang") {
    server s;
    s.http.set_payload_max_length(1024);
    s.start();
    auto c = s.connect();
    std::string body;
    auto start = clock::now();
    auto r = c->post("/echo", "", pattern(8 << 20), in(10s), body, unlimited);
    CHECK(r.status == 413);
    CHECK(clock::now() - start < 5s);
  }

  TEST_CASE(
      "a server that answers before reading the body is heard, and the sending stops") {
    // More than the socket buffers of both sides hold, so the sender is
    // still waiting to write when the answer and the close come.
    raw_server raw({"HTTP/1.1 413 Payload Too Large\r\nConnection: "
                    "close\r\nContent-Length: 4\r\n\r\n"
                    "big!"},
                   true);
    auto c = http_connection::open("127.0.0.1", raw.port, in(5s));
    std::string body;
    auto sent = pattern(std::size_t{64} << 20);
    auto start = clock::now();
    auto r = c->post("/x", "", sent, in(10s), body, unlimited);
    CHECK(r.status == 413);
    CHECK(body.substr(0, r.body_size) == "big!");
    CHECK_FALSE(c->reusable());
    CHECK(clock::now() - start < 5s);
  }

  TEST_CASE("a socket that stays quiet through a spin is spun on ever more rarely") {
    // Whether a wait spun shows without a clock: with a byte waiting, a
    // spin finds it and a skipped spin returns 0.
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    lp::detail::spin_wait spin;
    auto ready = [&] { return spin(pair[0], POLLIN) & POLLIN; };
    char byte = 'x';
    REQUIRE(::write(pair[1], &byte, 1) == 1);
    CHECK(ready());
    REQUIRE(::read(pair[0], &byte, 1) == 1);
    // Misses in a row: after the k-th, the next 2^k - 1 waits block at once.
    for (int misses = 1; misses <= 11; ++misses) {
      CAPTURE(misses);
      auto start = clock::now();
      CHECK_FALSE(ready());  // quiet: a miss
      CHECK(clock::now() - start >= lp::detail::spin_wait::budget);
      REQUIRE(::write(pair[1], &byte, 1) == 1);
      int skipped = 0;
      while (!ready() && skipped < 5000) ++skipped;
      CHECK(skipped == (1 << std::min(misses, 10)) - 1);
      REQUIRE(::read(pair[0], &byte, 1) == 1);
      // The spin that found the byte ended the run: the next one spins.
      REQUIRE(::write(pair[1], &byte, 1) == 1);
      CHECK(ready());
      REQUIRE(::read(pair[0], &byte, 1) == 1);
      for (int again = 1; again <= misses; ++again) {  // `misses` in a row again
        CHECK_FALSE(ready());
        for (int skip = 0; skip < (1 << again) - 1; ++skip) CHECK_FALSE(ready());
      }
    }
    ::close(pair[0]);
    ::close(pair[1]);
  }
}
