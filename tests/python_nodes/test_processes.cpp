// Python nodes in programs launched as processes: test_multi_processing
// (this test is the launcher; python_nodes_program, the nodes) and
// local_multi_processing (the example python_learner, run as a command).
// Needs no tool beyond the README's packages: HTTP by a socket of its own,
// processes from /proc.
// Needs LP_TEST_PYTHON, PYTHONPATH, LP_PYTHON_NODES_PROGRAM and
// LP_EXAMPLE_PYTHON_LEARNER, as meson sets them.

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/json.hpp>
#include <launchpad/launchpad.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../command.hpp"
#include "graphs.hpp"

namespace {

using namespace std::chrono_literals;
using test_process::eventually;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value, "meson sets ", name);
  return value;
}

lp::process_test_options nodes_of(const std::string& scenario) {
  lp::process_test_options options;
  options.executable = env("LP_PYTHON_NODES_PROGRAM");
  options.arguments = {"--scenario=" + scenario, "--lp_python=" + env("LP_TEST_PYTHON")};
  return options;
}

struct reply {
  int status = -1;  // -1: no reply
  std::string body;
};

// A POST to a node as curl makes it, over a socket of its own, with
// "Connection: close" so that the reply ends with the connection. With
// `announced`, the request says its body is that long and sends none.
reply post(const std::string& url, const std::string& path, const std::string& body,
           const std::string& secret, std::size_t announced = 0) {
  auto colon = url.rfind(':');
  int port = std::stoi(url.substr(colon + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  reply out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
    std::string request =
        "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        "Content-Type: application/json\r\nConnection: close\r\n" +
        (secret.empty() ? "" : "Authorization: Bearer " + secret + "\r\n") +
        "Content-Length: " + std::to_string(announced ? announced : body.size()) +
        "\r\n\r\n" + body;
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
      text.append(buffer, static_cast<std::size_t>(n));
    if (text.starts_with("HTTP/1.1 ") && text.size() > 12)
      out.status = std::stoi(text.substr(9, 3));
    if (auto end = text.find("\r\n\r\n"); end != std::string::npos)
      out.body = text.substr(end + 4);
  }
  ::close(fd);
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Python runtimes still running of program `program` (none should outlive
// their launch; `--node=<program>/<label>` names each in ps), from /proc:
// the README's machine has no pgrep.
int runtimes_of(const std::string& program) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto command = file_text(entry.path().string() + "/cmdline");
    if (command.find("launchpad_client.runtime") != std::string::npos &&
        command.find(std::string("--node=") + program + "/") != std::string::npos)
      ++found;
  }
  return found;
}

}  // namespace

TEST_SUITE("python_nodes") {
  TEST_CASE(
      "test_mp: calls both ways, and HTTP callers get the protocol's errors from a "
      "Python node") {
    lp::program p("pyn_calls");
    auto made = pyn::make(p, "calls");
    {
      auto options = nodes_of("calls");
      options.max_body_mb = 1;
      lp::controller running(p, options);
      auto learner = running.client(made.learner);
      CHECK(learner.describe() == "alpha:2:2.5");
      CHECK(learner.update({1.f, 2.f, 3.f}) == doctest::Approx(3.0));
      CHECK(running.client(made.counter).get() == 3);
      auto url = running.urls().at("learner");
      auto secret = running.secret();
      // Well-formed: as against any node.
      auto steps = post(url, "/lp/v1/call/steps", "[]", secret);
      CHECK(steps.status == 200);
      CHECK(steps.body == R"({"result":1})");
      // Wrong types, no secret, no such method, a body that is no JSON.
      auto wrong = post(url, "/lp/v1/call/update", R"(["x"])", secret);
      CHECK(wrong.status == 400);
      CHECK(wrong.body.find("argument 1") != std::string::npos);
      CHECK(post(url, "/lp/v1/call/steps", "[]", "").status == 401);
      CHECK(post(url, "/lp/v1/call/nope", "[]", secret).status == 404);
      CHECK(post(url, "/lp/v1/call/steps", "[1,", secret).status == 400);
      // A body over --lp_max_body_mb, refused on its announced length.
      CHECK(post(url, "/lp/v1/call/describe", "", secret, std::size_t{2} << 20).status ==
            413);
      // The node serves on after all of them.
      CHECK(learner.steps() == 1);
      CHECK(running.stop());
    }
    CHECK(runtimes_of("pyn_calls") == 0);
  }

  TEST_CASE(
      "test_mp: a Python node killed with SIGKILL restarts and restores its checkpoint") {
    lp::program p("pyn_restarts");
    auto made = pyn::make(p, "restarts");
    lp::controller running(p, nodes_of("restarts"));
    auto tally = running.client(made.tally);
    CHECK(tally.add(5) == 5);
    CHECK(tally.add(3) == 8);
    // A periodic save after the last call holds 8: its state's one CBOR byte.
    auto saved = running.run_dir() + "/checkpoints/tallies/0.ckpt";
    REQUIRE(eventually(
        [&] {
          auto text = file_text(saved);
          return text.find("service Tally\nbytes 1\n") != std::string::npos &&
                 text.back() == 8;
        },
        30s));
    auto first = tally.pid();
    REQUIRE(::kill(static_cast<pid_t>(first), SIGKILL) == 0);
    long total = -1, now = first;
    CHECK(eventually(
        [&] {
          try {
            now = tally.pid();
            total = tally.add(0);
            return now != first;
          } catch (const lp::error&) {
            return false;  // restarting
          }
        },
        60s));
    CHECK(now != first);
    CHECK(total == 8);
    CHECK(running.stop());
  }

  TEST_CASE(
      "test_mp: a class unlike its declaration stops the launch before any node starts") {
    lp::program p("pyn_mismatch");
    pyn::make(p, "mismatch");
    try {
      lp::controller running(p, nodes_of("mismatch"));
      FAIL("the launch started");
    } catch (const lp::launch_error& e) {
      std::string message = e.what();
      CAPTURE(message);
      CHECK(message.find("learners/0") != std::string::npos);
      CHECK(message.find("has no method update") != std::string::npos);
    }
  }

  TEST_CASE("test_mp: a damaged checkpoint ends the launch without restarts") {
    test_process::scratch resume;
    std::filesystem::create_directories(resume.path + "/tallies");
    std::ofstream(resume.path + "/tallies/0.ckpt")
        << "lp-checkpoint 1\nservice Tally\nbytes 1\n"
        << "fnv1a64 0000000000000000\n\x08";
    lp::program p("pyn_restarts");
    pyn::make(p, "restarts");
    auto options = nodes_of("restarts");
    options.arguments.push_back("--lp_resume=" + resume.path);
    lp::controller running(p, options);
    try {
      running.wait_for(60s);
      FAIL("the launch did not fail");
    } catch (const lp::node_failure& e) {
      std::string summary = e.what();
      CAPTURE(summary);
      CHECK(summary.find("tallies/0") != std::string::npos);
      CHECK(summary.find("a restart would not mend") != std::string::npos);
      CHECK(summary.find("checksum") != std::string::npos);
    }
  }

  TEST_CASE(
      "test_mp: an __init__ that raises is restarted as its group says, then fails") {
    lp::program p("pyn_init_raises");
    pyn::make(p, "init_raises");
    lp::controller running(p, nodes_of("init_raises"));
    try {
      running.wait_for(60s);
      FAIL("the launch did not fail");
    } catch (const lp::node_failure& e) {
      std::string summary = e.what();
      CAPTURE(summary);
      CHECK(summary.find("learners/0") != std::string::npos);
      CHECK(summary.find("no GPU here") != std::string::npos);
      CHECK(summary.find("a restart would not mend") == std::string::npos);
    }
  }

  TEST_CASE(
      "test_mp: a Python run() that makes no sign of progress past its health_timeout "
      "fails, named") {
    lp::program p("pyn_stuck");
    pyn::make(p, "stuck");
    lp::controller running(p, nodes_of("stuck"));
    CHECK_THROWS_AS(running.wait_for(60s), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.find("[lp] node stuck/0 failed: hung: its run() made no sign of "
                       "progress for its group's health_timeout") != std::string::npos);
    // The runtime's last words say how long, and what counts as a sign.
    CHECK(summary.find("[lp] node stuck/0 hung: its run() made no sign of progress (a "
                       "call, launchpad_client.stop_requested(), a metric, "
                       "launchpad_client.heartbeat()) for ") != std::string::npos);
    CHECK(summary.find("past its group's health_timeout of 500 ms; ending its process") !=
          std::string::npos);
    CHECK(runtimes_of("pyn_stuck") == 0);
  }

  TEST_CASE(
      "test_mp: a Python handler that holds the node's turn past its health_timeout "
      "fails, named") {
    lp::program p("pyn_knot");
    auto made = pyn::make(p, "knot");
    lp::controller running(p, nodes_of("knot"));
    auto learner = running.client(made.learner);
    CHECK(learner.steps() == 0);
    CHECK_THROWS_AS(learner.with_deadline(20s).sleep_ms(600'000), lp::transport_error);
    CHECK_THROWS_AS(running.wait_for(60s), lp::node_failure);
    auto summary = running.summary();
    INFO(summary);
    CHECK(summary.find("[lp] node knots/0 failed: hung: a call waited past its group's "
                       "health_timeout") != std::string::npos);
    CHECK(summary.find("[lp] node knots/0 hung: a call waited ") != std::string::npos);
    CHECK(summary.find(" ms for its handlers (calls in flight: sleep_ms (1)), past its "
                       "group's health_timeout of 500 ms") != std::string::npos);
    CHECK(runtimes_of("pyn_knot") == 0);
  }

  TEST_CASE(
      "test_mp: a Python run() that works past its health_timeout with heartbeats "
      "lives") {
    lp::program p("pyn_beating");
    auto made = pyn::make(p, "beating");
    lp::controller running(p, nodes_of("beating"));
    auto beater = running.client(made.beater);
    auto first = beater.pid();
    CHECK(eventually([&] { return beater.finished(); }, 30s));
    CHECK(beater.pid() == first);
    CHECK_FALSE(running.stop_requested());
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }

  TEST_CASE("local_mt: the status page gives a Python node's own process") {
    auto program = env("LP_PYTHON_NODES_PROGRAM");
    test_process::command run({program, "--scenario=calls", "--lp_launch=local_mt",
                               "--lp_python=" + env("LP_TEST_PYTHON")});
    std::string run_dir;
    REQUIRE(eventually(
        [&] {
          auto output = run.output();
          auto secret = output.find("/secret");
          auto at = output.rfind(' ', secret);
          if (secret == std::string::npos || at == std::string::npos ||
              output.find("learner serving at") == std::string::npos)
            return false;
          run_dir = output.substr(at + 1, secret - at - 1);
          return true;
        },
        60s));
    CAPTURE(run_dir);
    test_process::command status({program, "--lp_status=" + run_dir, "--lp_json"});
    REQUIRE(status.exit_code(30s) == 0);
    auto nodes = lp::json::parse(status.output())["nodes"];
    std::map<std::string, long> pids;
    for (const auto& node : nodes)
      pids[node["label"].get<std::string>()] = node["pid"].get<long>();
    CHECK(pids.at("counter") == run.pid);
    CHECK(pids.at("learner") != run.pid);
    CHECK(file_text("/proc/" + std::to_string(pids.at("learner")) + "/cmdline")
              .find("launchpad_client.runtime") != std::string::npos);
    REQUIRE(::kill(run.pid, SIGTERM) == 0);
    CHECK(run.exit_code(60s) == 0);
    CHECK(runtimes_of("pyn_calls") == 0);
  }

  TEST_CASE("--lp_python naming no interpreter fails the launch, naming both") {
    for (std::string policy : {"local_mp", "local_mt"}) {
      CAPTURE(policy);
      test_process::command run({env("LP_PYTHON_NODES_PROGRAM"), "--scenario=calls",
                                 "--lp_launch=" + policy,
                                 "--lp_python=/nonexistent/python3"});
      auto code = run.exit_code(60s);
      auto output = run.output();
      CAPTURE(output);
      REQUIRE(code.has_value());
      CHECK(*code == 1);
      CHECK(output.find(
                "the Python interpreter '/nonexistent/python3' (--lp_python) is not "
                "there") != std::string::npos);
      CHECK(output.find("importable") == std::string::npos);
    }
  }

  TEST_CASE("a graph picture names a Python node's class") {
    test_process::command run({env("LP_EXAMPLE_PYTHON_LEARNER"), "--lp_graph=mermaid"});
    CHECK(run.exit_code(30s) == 0);
    CHECK(run.output().find("learner<br/>Learner (Python learner.Learner)") !=
          std::string::npos);
  }

  TEST_CASE("the example's C++ actors and Python learner, labelled, and nothing left") {
    for (std::string policy : {"local_mp", "local_mt", "test_mt"}) {
      CAPTURE(policy);
      test_process::command run({env("LP_EXAMPLE_PYTHON_LEARNER"),
                                 "--lp_launch=" + policy,
                                 "--lp_python=" + env("LP_TEST_PYTHON")});
      auto code = run.exit_code(120s);
      auto output = run.output();
      CAPTURE(output);
      REQUIRE(code.has_value());
      CHECK(*code == 0);
      CHECK(output.find("average reward") != std::string::npos);
      if (policy == "local_mp")
        CHECK(output.find("[learner] [lp] learner serving at http://127.0.0.1:") !=
              std::string::npos);
      CHECK(runtimes_of("python_learner") == 0);
    }
  }
}
