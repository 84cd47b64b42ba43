// Typed calls over real loopback HTTP: every wire type, futures, void and
// const methods, remote exceptions, concurrency.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/call/node_addresses.hpp>
#include <memory>

#include "services.hpp"

namespace {
using BoxBool = t::Box<bool>;
using BoxInt = t::Box<int>;
using BoxInt64 = t::Box<std::int64_t>;
using BoxUint64 = t::Box<std::uint64_t>;
using BoxDouble = t::Box<double>;
using BoxFloat = t::Box<float>;
using BoxString = t::Box<std::string>;
using BoxVector = t::Box<std::vector<int>>;
using BoxNested = t::Box<std::vector<std::vector<std::string>>>;
using BoxMap = t::Box<std::map<std::string, double>>;
using BoxOptional = t::Box<std::optional<int>>;
using BoxPair = t::Box<std::pair<int, std::string>>;
using BoxTuple = t::Box<std::tuple<int, double, std::string>>;
using BoxPoint = t::Box<t::Point>;
using BoxPixel = t::Box<t::Pixel>;
using BoxPoints = t::Box<std::vector<t::Point>>;
}  // namespace

LP_SERVICE(BoxBool, echo);
LP_SERVICE(BoxInt, echo);
LP_SERVICE(BoxInt64, echo);
LP_SERVICE(BoxUint64, echo);
LP_SERVICE(BoxDouble, echo);
LP_SERVICE(BoxFloat, echo);
LP_SERVICE(BoxString, echo);
LP_SERVICE(BoxVector, echo);
LP_SERVICE(BoxNested, echo);
LP_SERVICE(BoxMap, echo);
LP_SERVICE(BoxOptional, echo);
LP_SERVICE(BoxPair, echo);
LP_SERVICE(BoxTuple, echo);
LP_SERVICE(BoxPoint, echo);
LP_SERVICE(BoxPixel, echo);
LP_SERVICE(BoxPoints, echo);

TEST_SUITE("calls") {
  template <class B, class V>
  void check_round_trip(lp::program & p, lp::controller * &running,
                        std::vector<std::function<void()>> & checks,
                        const std::string& label, V value) {
    auto node = p.add_node<B>(label);
    checks.push_back([&running, node, value, label] {
      INFO("type " << label);
      auto echoed = running->client(node).echo(value);
      CHECK((echoed == value));
      CHECK((running->client(node).async.echo(value).get() == value));
    });
  }

  TEST_CASE("every supported type crosses the wire and comes back equal") {
    lp::program p("types");
    lp::controller* running = nullptr;
    std::vector<std::function<void()>> checks;
    check_round_trip<BoxBool>(p, running, checks, "bool", true);
    check_round_trip<BoxInt>(p, running, checks, "int", -123456);
    check_round_trip<BoxInt64>(p, running, checks, "int64",
                               std::int64_t{-9'000'000'000'000'000'000});
    check_round_trip<BoxUint64>(p, running, checks, "uint64",
                                std::uint64_t{18'000'000'000'000'000'000u});
    check_round_trip<BoxDouble>(p, running, checks, "double", 3.141592653589793);
    check_round_trip<BoxFloat>(p, running, checks, "float", 1.5f);
    check_round_trip<BoxString>(p, running, checks, "string",
                                std::string("héllo \"wire\"\n\0x", 17));
    check_round_trip<BoxVector>(p, running, checks, "vector", std::vector<int>{1, 2, 3});
    check_round_trip<BoxNested>(
        p, running, checks, "nested",
        std::vector<std::vector<std::string>>{{"a"}, {}, {"b", "c"}});
    check_round_trip<BoxMap>(p, running, checks, "map",
                             std::map<std::string, double>{{"x", 1.0}, {"y", -2.5}});
    check_round_trip<BoxOptional>(p, running, checks, "optional", std::optional<int>(7));
    check_round_trip<BoxOptional>(p, running, checks, "nullopt", std::optional<int>());
    check_round_trip<BoxPair>(p, running, checks, "pair",
                              std::pair<int, std::string>(1, "one"));
    check_round_trip<BoxTuple>(p, running, checks, "tuple",
                               std::tuple<int, double, std::string>(1, 2.5, "three"));
    check_round_trip<BoxPoint>(p, running, checks, "hana_struct", t::Point{1.5, -2});
    check_round_trip<BoxPixel>(p, running, checks, "nlohmann_struct",
                               t::Pixel{1, 2, 3, "px"});
    check_round_trip<BoxPoints>(p, running, checks, "vector_of_structs",
                                std::vector<t::Point>{{0, 0}, {1, 1}});
    auto controller = lp::launch<lp::test_multi_threading>(p);
    running = &controller;
    for (auto& check : checks) check();
  }

  TEST_CASE("void and const methods, arguments converted as for a local call") {
    lp::program p("void_const");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    short small = 5;
    CHECK(counter.add(small) == 5);  // short -> long, as locally
    CHECK(counter.add(2) == 7);
    CHECK(counter.get() == 7);  // const method
    counter.reset();            // void method
    CHECK(counter.get() == 0);
    static_assert(std::is_void_v<decltype(counter.reset())>);
    static_assert(std::is_same_v<decltype(counter.async.get()), std::future<long>>);
    CHECK(counter.node() == "counter");
  }

  TEST_CASE("futures: many outstanding calls, each answered") {
    lp::program p("futures");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    std::vector<std::future<long>> pending;
    for (int i = 0; i < 500; ++i) pending.push_back(counter.async.add(1));
    std::vector<long> seen;
    for (auto& f : pending) seen.push_back(f.get());
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i < 500; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i + 1);
    counter.async.reset().get();
    CHECK(counter.get() == 0);
  }

  TEST_CASE("a remote exception reaches the caller as lp::remote_error") {
    lp::program p("remote_exception");
    auto thrower = p.add_node<t::Thrower>("thrower");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(thrower);
    try {
      client.fail("the disk is full");
      FAIL("no exception");
    } catch (const lp::remote_error& e) {
      CHECK(e.node() == "thrower");
      CHECK(e.method() == "fail");
      CHECK(e.code() == "remote_exception");
      CHECK(e.message() == "the disk is full");
      CHECK(e.status() == 500);
      CHECK(std::string(e.what()).find("thrower.fail") != std::string::npos);
      CHECK(e.id() == "remote_error");
    }
    CHECK_THROWS_AS(client.async.fail("later").get(), lp::remote_error);
    CHECK_THROWS_WITH_AS(client.fail_oddly(),
                         doctest::Contains("not derived from std::exception"),
                         lp::remote_error);
  }

  TEST_CASE("8 threads x 1000 calls on one node: an exact count, one call at a time") {
    lp::program p("concurrency");
    auto c = p.add_node<t::Counter>("counter");
    auto o = p.add_node<t::Overlap>("overlap");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    auto overlap = running.client(o);
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
      threads.emplace_back([&] {
        for (int k = 0; k < 1000; ++k) counter.add(1);
        for (int k = 0; k < 20; ++k) overlap.enter();
      });
    for (auto& thread : threads) thread.join();
    CHECK(counter.get() == 8000);
    CHECK(overlap.max_seen() == 1);  // actor semantics: handlers never overlap
  }

  TEST_CASE("a service can opt into concurrent handlers") {
    lp::program p("concurrent_handlers");
    auto m = p.add_node<t::Meeting>("meeting");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto meeting = running.client(m);
    std::vector<std::future<bool>> met;
    for (int i = 0; i < 4; ++i) met.push_back(meeting.async.meet(4));
    for (auto& f : met) CHECK(f.get());
  }

  TEST_CASE(
      "deadlines: per client and per call; an expired call raises "
      "lp::deadline_exceeded") {
    lp::program p("deadlines");
    auto s = p.add_node<t::Sleepy>("sleepy");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto sleepy = running.client(s);
    auto impatient = sleepy.with_deadline(std::chrono::milliseconds(100));
    auto started = std::chrono::steady_clock::now();
    try {
      impatient.sleep(3000);
      FAIL("no deadline_exceeded");
    } catch (const lp::deadline_exceeded& e) {
      CHECK(e.node() == "sleepy");
      CHECK(e.method() == "sleep");
      CHECK(e.id() == "deadline_exceeded");
      CHECK(std::string(e.what()).find("100 ms") != std::string::npos);
    }
    // Less than the 3 s the handler sleeps: the caller did not wait for it.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
    CHECK_THROWS_AS(impatient.async.sleep(3000).get(), lp::deadline_exceeded);
    CHECK(sleepy.with_deadline(std::chrono::seconds(10)).sleep(1) == 1);  // in time
    CHECK(sleepy.sleep(200) == 200);  // the original keeps its generous default
    // Futures nobody waits for end with their deadline; nothing hangs on them.
    for (int i = 0; i < 20; ++i) (void)impatient.async.sleep(2000);
  }

  TEST_CASE("a client that is not bound, or whose program stopped, throws lp errors") {
    lp::client<t::Counter> unbound;
    CHECK_THROWS_AS(unbound.get(), lp::usage_error);

    lp::program p("stopped");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);
    CHECK(counter.add(1) == 1);
    running.stop();
    CHECK_THROWS_AS(counter.add(1), lp::transport_error);
  }
}

TEST_SUITE("calls") {
  TEST_CASE(
      "direct_calls<P>: the same results and errors without HTTP, on the caller's "
      "thread") {
    lp::program p("direct");
    auto counter = p.add_node<t::Counter>("counter");
    auto thrower = p.add_node<t::Thrower>("thrower");
    auto sleepy = p.add_node<t::Sleepy>("sleepy");
    auto points = p.add_node<BoxPoints>("points");
    auto running = lp::launch<lp::direct_calls<lp::test_multi_threading>>(p);
    auto count = running.client(counter);
    CHECK(count.add(2) == 2);
    CHECK(count.async.add(3).get() == 5);
    std::vector<t::Point> sent{{1, 2}, {3, 4}};
    CHECK(running.client(points).echo(sent) == sent);
    try {
      running.client(thrower).fail("direct disk full");
      FAIL("no exception");
    } catch (const lp::remote_error& e) {
      CHECK(e.node() == "thrower");
      CHECK(e.code() == "remote_exception");
      CHECK(e.message() == "direct disk full");
      CHECK(e.status() == 500);
    }
    CHECK_THROWS_AS(
        running.client(sleepy).with_deadline(std::chrono::milliseconds(10)).sleep(50),
        lp::deadline_exceeded);
    // 8 threads, one node: still one call at a time, the count exact.
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
      threads.emplace_back([&] {
        for (int j = 0; j < 500; ++j) count.add(1);
      });
    for (auto& thread : threads) thread.join();
    CHECK(count.get() == 5 + 8 * 500);
    running.stop();
    CHECK_THROWS_AS(count.add(1), lp::transport_error);
  }
}

// A fake node on a raw loopback socket that accepts one connection, reads
// the request's head, then sends its reply `first` at once and `trickled`
// one byte every 100 ms, at most 200 bytes (20 s), until the client closes
// or the test ends.
namespace trickle {
struct fake_node {
  fake_node(std::string first, std::string trickled)
      : first_(std::move(first)), trickled_(std::move(trickled)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener_ >= 0);
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0);
    REQUIRE(::listen(listener_, 4) == 0);
    socklen_t size = sizeof where;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&where), &size) == 0);
    port = ntohs(where.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~fake_node() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  int port = 0;
  std::atomic<int> bytes_sent{0};

 private:
  // Waits up to `ms` for `fd` to be readable; false on stop or timeout.
  bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return !stop_ && ::poll(&p, 1, ms) > 0;
  }
  void serve() {
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0 && !stop_; ++i)  // 10 s at most
      if (readable(listener_, 20))
        fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::string request;
    for (int i = 0; i < 500 && request.find("\r\n\r\n") == std::string::npos; ++i) {
      if (!readable(fd, 20)) continue;
      char buffer[4096];
      auto got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      request.append(buffer, static_cast<std::size_t>(got));
    }
    bool open = ::send(fd, first_.data(), first_.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(first_.size());
    for (std::size_t i = 0; open && i < trickled_.size() && i < 200 && !stop_; ++i) {
      open = ::send(fd, &trickled_[i], 1, MSG_NOSIGNAL) == 1;
      if (open) ++bytes_sent;
      // The pause between bytes, cut short when the client hangs up.
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        char byte;
        if (::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) open = false;
      }
    }
    ::close(fd);
  }
  std::string first_, trickled_;
  int listener_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

// A client of the fake node, as a launch would make it.
lp::client<t::Sleepy> client_of(const fake_node& node) {
  auto nodes = std::make_shared<lp::detail::local_directory>();
  nodes->publish("trickler", {"127.0.0.1", node.port});
  auto channel = std::make_shared<lp::detail::http_channel>(
      "trickler", nodes, lp::detail::http_channel::options{});
  return lp::detail::client_access::make<t::Sleepy>(channel);
}

// A valid reply to sleep(): {"result": 7} in CBOR, ~80 bytes with its head.
std::string reply() {
  std::string body = "\xa1\x66result\x07";
  return "HTTP/1.1 200 OK\r\nContent-Type: application/cbor\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// How long a call with a 1 s deadline took to fail with deadline_exceeded.
template <class Call>
double seconds_to_fail(Call call) {
  auto start = std::chrono::steady_clock::now();
  try {
    call();
    FAIL("the call succeeded");
  } catch (const lp::deadline_exceeded& e) {
    CHECK(std::string(e.what()).find("1000 ms") != std::string::npos);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace trickle

TEST_SUITE("calls") {
  TEST_CASE("a deadline bounds the whole call against a node that trickles its reply") {
    using std::chrono::milliseconds;
    auto whole = trickle::reply();
    // A head that promises 60 bytes of body: 6 s of trickle after it.
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/cbor\r\nContent-Length: 60\r\n\r\n";
    struct {
      const char* what;
      std::string first, trickled;
      bool async;
    } cases[] = {
        {"the whole reply trickles", "", whole, false},
        {"the head comes at once, the body trickles", head, std::string(60, '\xf6'),
         false},
        {"a future: the whole reply trickles", "", whole, true},
    };
    for (auto& c : cases) {
      std::string what = c.what;
      CAPTURE(what);
      trickle::fake_node node(c.first, c.trickled);
      auto client = trickle::client_of(node).with_deadline(milliseconds(1000));
      double took = trickle::seconds_to_fail([&] {
        if (c.async)
          client.async.sleep(1).get();
        else
          client.sleep(1);
      });
      MESSAGE(what << ": deadline_exceeded after " << took << " s, "
                   << node.bytes_sent.load() << " bytes trickled");
      CHECK(took >= 0.95);
      CHECK(took < 1.9);  // not the whole trickle (8 s and more)
      CHECK(node.bytes_sent < static_cast<int>(c.trickled.size()));
    }
  }
}
