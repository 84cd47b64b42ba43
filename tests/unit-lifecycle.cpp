// Node lifecycle: run(), stop from anywhere, waiting, on_stop, context, and
// how each launch policy ends.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "services.hpp"

namespace life {
std::atomic<int> stops_seen{0};

struct Stopper {
  void run() { lp::stop(); }
};
struct Waiter {
  std::atomic<bool>* woke;
  void run() {
    while (!lp::wait_for_stop(std::chrono::milliseconds(5))) {
    }
    CHECK(lp::stop_requested());
    *woke = true;
  }
};
struct Failer {
  void run() { throw std::runtime_error("boom in run"); }
};
struct Listener {
  explicit Listener(std::atomic<int>* count) {
    lp::on_stop([count] { ++*count; });
  }
  int ping() { return 1; }
};
struct Reporter {
  std::vector<lp::node_context>* seen;
  std::mutex* mutex;
  void run() {
    std::lock_guard lock(*mutex);
    seen->push_back(lp::context());
  }
};
struct Quick {
  std::atomic<int>* finished;
  void run() { ++*finished; }
};
// Looks for the launch's secret where curl users are told to find it.
struct SecretReader {
  std::string* found;
  void run() {
    auto path = lp::context().run_dir + "/secret";
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && (info.st_mode & 0777) == 0600) {
      std::ifstream file(path);
      std::getline(file, *found);
    }
    lp::stop();
  }
};
struct SelfSignal {
  void run() {
    ::kill(::getpid(), SIGINT);
    CHECK(lp::wait_for_stop(std::chrono::seconds(10)));
  }
};
}  // namespace life
LP_SERVICE(life::Stopper);
LP_SERVICE(life::Waiter);
LP_SERVICE(life::Failer);
LP_SERVICE(life::Listener, ping);
LP_SERVICE(life::Reporter);
LP_SERVICE(life::Quick);
LP_SERVICE(life::SelfSignal);
LP_SERVICE(life::SecretReader);

TEST_SUITE("lifecycle") {
  TEST_CASE(
      "lp::stop() from a node stops the program; wait_for_stop wakes; on_stop runs") {
    std::atomic<bool> woke{false};
    std::atomic<int> stops{0};
    lp::program p("stop_from_node");
    p.add_node<life::Waiter>("waiter", &woke);
    p.add_node<life::Listener>("listener", &stops);
    p.add_node<life::Stopper>("stopper");
    auto running = lp::launch<lp::test_multi_threading>(p);
    running.wait();
    CHECK(woke);
    CHECK(stops == 1);
    CHECK(running.stop_requested());
  }

  TEST_CASE("lp::stop() from main stops a program that only serves") {
    std::atomic<int> stops{0};
    lp::program p("stop_from_main");
    auto l = p.add_node<life::Listener>("listener", &stops);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.client(l).ping() == 1);
    CHECK_FALSE(running.wait_for(std::chrono::milliseconds(20)));  // serves until stopped
    lp::stop();
    CHECK(running.wait_for(std::chrono::seconds(10)));
    CHECK(stops == 1);
  }

  TEST_CASE(
      "wait() throws lp::node_failure holding the node's own exception; the program "
      "stops") {
    std::atomic<bool> woke{false};
    lp::program p("failing");
    p.add_node<life::Waiter>("waiter", &woke);
    p.add_node<life::Failer>("failer");
    auto running = lp::launch<lp::test_multi_threading>(p);
    try {
      running.wait();
      FAIL("wait() returned although a node failed");
    } catch (const lp::node_failure& e) {
      CHECK(std::string(e.what()) ==
            "[lp.node_failure] node failer failed: boom in run\n");
      CHECK(running.summary() == "node failer failed: boom in run\n");
      CHECK_THROWS_WITH_AS(std::rethrow_if_nested(e), "boom in run", std::runtime_error);
    }
    CHECK_FALSE(running.stop());
    CHECK(woke);
  }

  TEST_CASE(
      "a launched program stops when every run() has returned; a test decides itself") {
    std::atomic<int> finished{0};
    lp::program p("all_done");
    auto c = p.add_node<t::Counter>("counter");  // serves, has no run()
    for (int i = 0; i < 3; ++i) p.group("quick").add_node<life::Quick>(&finished);
    std::vector<char*> argv{const_cast<char*>("prog"), nullptr};
    CHECK(lp::launch<lp::test_multi_threading>(p, 1, argv.data()) == 0);
    CHECK(finished == 3);

    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait({"quick"}));
    CHECK(finished == 6);
    CHECK(running.client(c).get() == 0);  // still serving
    CHECK_FALSE(running.stop_requested());
    CHECK_THROWS_AS(running.wait({"nobody"}), lp::graph_error);
  }

  TEST_CASE("lp::context() tells a node who it is; outside a node it throws") {
    std::vector<lp::node_context> seen;
    std::mutex mutex;
    lp::program p("ctx");
    p.add_node<life::Reporter>("solo", &seen, &mutex);
    p.group("team").add_node<life::Reporter>(&seen, &mutex);
    p.group("team").add_node<life::Reporter>(&seen, &mutex);
    auto running = lp::launch<lp::test_multi_threading>(p);
    CHECK(running.wait({"solo", "team"}));
    running.stop();
    REQUIRE(seen.size() == 3);
    std::sort(seen.begin(), seen.end(),
              [](auto& a, auto& b) { return a.label < b.label; });
    CHECK(seen[0].label == "solo");
    CHECK(seen[0].group == "");
    CHECK(seen[0].index == -1);
    CHECK(seen[2].label == "team/1");
    CHECK(seen[2].group == "team");
    CHECK(seen[2].index == 1);
    CHECK(seen[2].program == "ctx");
    CHECK(seen[2].launch == "test_mt");
    CHECK_THROWS_AS(lp::context(), lp::usage_error);
    CHECK_THROWS_AS(lp::on_stop([] {}), lp::usage_error);  // no program runs now
  }

  TEST_CASE(
      "lp::launch with argv: exit status 0 when stopped cleanly, 1 when a node failed") {
    lp::program ok("ok");
    ok.add_node<life::Stopper>("stopper");
    std::string flag = "--lp_launch=local_mt";
    std::vector<char*> argv{const_cast<char*>("prog"), flag.data(), nullptr};
    CHECK(lp::launch(ok, 2, argv.data()) == 0);

    lp::program bad("bad");
    bad.add_node<life::Failer>("failer");
    CHECK(lp::launch<lp::local_multi_threading>(bad, 1, argv.data()) == 1);
  }

  TEST_CASE(
      "local_mt keeps its secret in a 0600 file of its run directory, gone afterwards") {
    std::string secret;
    lp::program p("secret_file");
    p.add_node<life::SecretReader>("reader", &secret);
    std::vector<char*> argv{const_cast<char*>("prog"), nullptr};
    CHECK(lp::launch<lp::local_multi_threading>(p, 1, argv.data()) == 0);
    CHECK(secret.size() == 32);
    std::string insecure = "--lp_insecure";
    std::vector<char*> argv2{const_cast<char*>("prog"), insecure.data(), nullptr};
    std::string none = "unset";
    lp::program q("no_secret_file");
    q.add_node<life::SecretReader>("reader", &none);
    CHECK(lp::launch<lp::local_multi_threading>(q, 2, argv2.data()) == 0);
    CHECK(none == "unset");  // no file to read
  }

  TEST_CASE("local_multi_threading stops gracefully on SIGINT") {
    lp::program p("sigint");
    p.add_node<life::SelfSignal>("self_signal");
    std::vector<char*> argv{const_cast<char*>("prog"), nullptr};
    CHECK(lp::launch<lp::local_multi_threading>(p, 1, argv.data()) == 0);
  }
}
