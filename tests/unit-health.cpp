// A node that hangs, under a group's health_timeout: a handler that never
// returns, a run() that makes no sign of progress (each failed, or
// restarted by the group's restart policy), and a run() that works on with
// signs of life, which must not be taken for hung.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <launchpad/detail/process/reachability.hpp>

#include "command.hpp"
#include "processes/scenarios.hpp"
#include "scenario_launch.hpp"
#include "services.hpp"

using test_process::eventually;
using test_process::scenario_options;
using test_process::scratch;

namespace {

// A node as the network shows it: it answers every GET on a kept
// connection while `answering`, and otherwise reads and says nothing, as a
// host behind a partition does. Loopback, a port of its own.
class silent_node {
 public:
  silent_node() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(::listen(listener_, 16) == 0);
    socklen_t size = sizeof at;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &size);
    port = ntohs(at.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~silent_node() {
    done_ = true;
    thread_.join();
    for (int fd : peers_) ::close(fd);
    ::close(listener_);
  }
  int port = 0;
  std::atomic<bool> answering{true};
  std::atomic<int> drop{0};  // probes to leave unanswered, then answer again
  std::atomic<int> dropped{0}, answered{0};

 private:
  void serve() {
    while (!done_) {
      std::vector<pollfd> watched{{listener_, POLLIN, 0}};
      for (int fd : peers_) watched.push_back({fd, POLLIN, 0});
      if (::poll(watched.data(), watched.size(), 20) <= 0) continue;
      if (watched[0].revents & POLLIN)
        peers_.push_back(::accept(listener_, nullptr, nullptr));
      for (std::size_t i = 1; i < watched.size(); ++i) {
        if (!(watched[i].revents & (POLLIN | POLLHUP))) continue;
        char buffer[4096];
        auto n = ::read(watched[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          ::close(watched[i].fd);
          std::erase(peers_, watched[i].fd);
          continue;
        }
        if (drop > 0) {
          --drop;
          ++dropped;
          continue;
        }
        if (!answering) continue;
        ++answered;
        std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        (void)!::write(watched[i].fd, reply.data(), reply.size());
      }
    }
  }
  int listener_ = -1;
  std::vector<int> peers_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// What a watch of one node reported, and when.
struct reports {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> seen;
  std::size_t count() {
    std::lock_guard lock(mutex);
    return seen.size();
  }
};

}  // namespace

TEST_SUITE("health") {
  TEST_CASE(
      "a node that deadlocks itself: past its health_timeout it fails, or restarts") {
    {
      scratch dir;
      lp::program p("scenario_knot");
      scenarios::make(p, "knot", dir.path);
      auto running =
          lp::launch<lp::test_multi_processing>(p, scenario_options("knot", dir));
      auto knot = running.client(p.find<scenarios::Knot>("knots/0"));
      CHECK_THROWS_AS(knot.with_deadline(std::chrono::seconds(20)).tie(),
                      lp::transport_error);
      CHECK_THROWS_AS(running.wait(), lp::node_failure);
      auto summary = running.summary();
      INFO(summary);
      CHECK(summary.find("[lp] node knots/0 failed: hung: a call waited past its group's "
                         "health_timeout") != std::string::npos);
      CHECK(
          summary.find("past its group's health_timeout of 500 ms; ending its process") !=
          std::string::npos);
      // Its last words name the handler it was stuck in: tie, which calls
      // the node itself and waits for its own turn.
      auto hung = summary.find("[lp] node knots/0 hung: a call waited ");
      REQUIRE(hung != std::string::npos);
      auto words = summary.substr(hung, summary.find('\n', hung) - hung);
      INFO(words);
      CHECK(words.find(" ms for its handlers (calls in flight: ") != std::string::npos);
      CHECK(words.find("tie (1)") != std::string::npos);
    }
    {
      scratch dir;
      lp::program p("scenario_knot_restarted");
      scenarios::make(p, "knot_restarted", dir.path);
      auto running = lp::launch<lp::test_multi_processing>(
          p, scenario_options("knot_restarted", dir));
      auto knot = running.client(p.find<scenarios::Knot>("knots/0"));
      CHECK_THROWS_AS(knot.with_deadline(std::chrono::seconds(20)).tie(),
                      lp::transport_error);
      int answer = 0;
      CHECK(eventually(
          [&] {
            try {
              answer = knot.ping();
              return true;
            } catch (const lp::transport_error&) {
              return false;
            }
          },
          std::chrono::seconds(20)));
      CHECK(answer == 1);
      CHECK(running.stop());
    }
  }

  TEST_CASE("a run() that deadlocks itself: past its health_timeout it fails, named") {
    scratch dir;
    lp::program p("scenario_stuck");
    scenarios::make(p, "stuck", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, scenario_options("stuck", dir));
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.rfind(
              "[lp] node stuck/0 failed: hung: its run() made no sign of progress "
              "for its group's health_timeout",
              0) == 0);
    // The node's own last words say how long, and what counts as a sign.
    CHECK(summary.find(
              "[lp] node stuck/0 hung: its run() made no sign of progress (a call") !=
          std::string::npos);
    CHECK(summary.find("past its group's health_timeout of 500 ms; ending its process") !=
          std::string::npos);
    CHECK(dir.read("stuck.starts") == "1");
  }

  TEST_CASE("a run() that deadlocks itself is restarted by its group's restart policy") {
    scratch dir;
    lp::program p("scenario_stuck_restarted");
    scenarios::make(p, "stuck_restarted", dir.path);
    auto running = lp::launch<lp::test_multi_processing>(
        p, scenario_options("stuck_restarted", dir));
    // Restarted once, it deadlocks again, and that second hang is the failure.
    CHECK_THROWS_AS(running.wait(), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.find(
              "[lp] node stuck/0 failed: hung: its run() made no sign of progress") !=
          std::string::npos);
    CHECK(dir.read("stuck.starts") == "2");
  }

  TEST_CASE(
      "a run() that works past its health_timeout with lp::heartbeat() is not killed") {
    scratch dir;
    lp::program p("scenario_beating");
    scenarios::make(p, "beating", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, scenario_options("beating", dir));
    auto before = running.pids();
    std::sort(before.begin(), before.end());
    // Beating's run() takes 3 s, six health_timeouts; Patient's waits for
    // the stop all along.
    REQUIRE(
        eventually([&] { return dir.has("beating.done"); }, std::chrono::seconds(30)));
    auto after = running.pids();
    std::sort(after.begin(), after.end());
    INFO(running.summary());
    CHECK(running.summary().empty());
    CHECK(after == before);
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }

  TEST_CASE(
      "the launcher's reachability watch: a node silent past its timeout is lost once; "
      "a shorter silence, or a new start, is not") {
    using namespace std::chrono_literals;
    using watch = lp::detail::reachability_watch;
    silent_node node;
    std::atomic<int> start{0};
    reports lost;
    const auto timeout = 600ms;
    watch watching(
        {{"unit", "label", timeout}},
        [&](const std::string& label) -> std::optional<watch::serving> {
          CHECK(label == "label");
          return watch::serving{{"127.0.0.1", node.port}, start.load()};
        },
        [&](const std::string& unit, std::chrono::milliseconds silence) {
          std::lock_guard lock(lost.mutex);
          CHECK(unit == "unit");
          CHECK(silence >= timeout);
          lost.seen.emplace_back(unit, std::chrono::steady_clock::now());
        },
        nullptr);
    std::this_thread::sleep_for(3 * timeout);
    CHECK(lost.count() == 0);  // it answers

    // One probe unanswered, then answers again: a silence of two periods
    // (each probe takes its whole period), a half of the timeout, made by
    // the node itself rather than by this thread's sleeps.
    node.drop = 1;
    REQUIRE(eventually([&] { return node.dropped == 1; }, 10 * timeout));
    int seen = node.answered;
    REQUIRE(eventually([&] { return node.answered >= seen + 2; }, 10 * timeout));
    CHECK(lost.count() == 0);

    node.answering = false;
    auto silent_from = std::chrono::steady_clock::now();
    REQUIRE(eventually([&] { return lost.count() == 1; }, 10 * timeout));
    auto found_after = lost.seen.front().second - silent_from;
    // Silent since its last answer, at most a period before we stopped it.
    CHECK(found_after >= timeout - watch::period_of(timeout));
    // Half a timeout late on an idle machine; the bound on it is the wait
    // above, a figure here.
    MESSAGE("found silent "
            << std::chrono::duration_cast<std::chrono::milliseconds>(found_after).count()
            << " ms after it stopped answering, its timeout " << timeout.count()
            << " ms");
    std::this_thread::sleep_for(2 * timeout);
    CHECK(lost.count() == 1);  // once per process

    ++start;  // restarted where it served: watched afresh
    REQUIRE(eventually([&] { return lost.count() == 2; }, 10 * timeout));
    node.answering = true;
  }
}
