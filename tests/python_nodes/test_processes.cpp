// Python nodes in programs launched as processes: test_multi_processing
// (this test is the launcher; python_nodes_program, the nodes) and
// local_multi_processing (the example python_learner, run as a command).
// Needs LP_TEST_PYTHON, PYTHONPATH, LP_PYTHON_NODES_PROGRAM and
// LP_EXAMPLE_PYTHON_LEARNER, as meson sets them.

#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/launchpad.hpp>
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

// What a shell command printed, and its exit status.
std::pair<int, std::string> shell(const std::string& line) {
  std::string text;
  FILE* pipe = ::popen((line + " 2>&1").c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    text.append(buffer, n);
  return {::pclose(pipe), text};
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Python runtimes still running whose spec lies under a directory of
// program `program` (none should outlive their launch).
int runtimes_of(const std::string& program) {
  return shell("pgrep -f '[l]aunchpad_client.runtime .*/lp-" + program + "\\.' | wc -l")
                     .second == "0\n"
             ? 0
             : 1;
}

}  // namespace

TEST_SUITE("python_nodes") {
  TEST_CASE(
      "test_mp: calls both ways, and curl gets the protocol's errors from a Python "
      "node") {
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
      auto auth = "-H 'Authorization: Bearer " + running.secret() + "' ";
      std::string curl = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 ";
      // Well-formed: as against any node.
      auto [ok, steps] = shell("curl -s --max-time 10 " + auth +
                               "-H 'Content-Type: application/json' -d '[]' " + url +
                               "/lp/v1/call/steps");
      CHECK(ok == 0);
      CHECK(steps == R"({"result":1})");
      // Wrong types, no secret, no such method, a body that is no JSON.
      CHECK(shell(curl + auth + "-H 'Content-Type: application/json' -d '[\"x\"]' " +
                  url + "/lp/v1/call/update")
                .second == "400");
      auto [_, said] = shell("curl -s --max-time 10 " + auth +
                             "-H 'Content-Type: application/json' -d '[\"x\"]' " + url +
                             "/lp/v1/call/update");
      CHECK(said.find("argument 1") != std::string::npos);
      CHECK(shell(curl + "-H 'Content-Type: application/json' -d '[]' " + url +
                  "/lp/v1/call/steps")
                .second == "401");
      CHECK(shell(curl + auth + "-H 'Content-Type: application/json' -d '[]' " + url +
                  "/lp/v1/call/nope")
                .second == "404");
      CHECK(shell(curl + auth + "-H 'Content-Type: application/json' -d '[1,' " + url +
                  "/lp/v1/call/steps")
                .second == "400");
      // A body over --lp_max_body_mb.
      test_process::scratch dir;
      std::ofstream(dir.path + "/big.json")
          << "[\"" << std::string(std::size_t{2} << 20, 'x') << "\"]";
      CHECK(shell(curl + auth + "-H 'Content-Type: application/json' --data-binary @" +
                  dir.path + "/big.json " + url + "/lp/v1/call/describe")
                .second == "413");
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
