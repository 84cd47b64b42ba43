// What a node counts and exports at GET /lp/v1/metrics, and what its own
// code records through lp::metrics (docs/observability.md).
#include <httplib.h>

#include <launchpad/detail/observe/exposition.hpp>
#include <launchpad/detail/observe/metric_name.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/replay.hpp>

#include "command.hpp"
#include "services.hpp"

namespace m {
// A node that records figures of its own, as a training loop would.
struct Recorder {
  long episode(double reward) {
    lp::metrics::counter("episodes").add(1);
    lp::metrics::gauge("replay_size").set(10 * ++episodes);
    lp::metrics::series("episode_return").record(reward);
    return episodes;
  }
  // Records under a name the test chooses, as `kind`; returns the error.
  std::string record_as(std::string kind, std::string name) {
    try {
      if (kind == "counter")
        lp::metrics::counter(name).add(1);
      else if (kind == "negative")
        lp::metrics::counter(name).add(-1);
      else if (kind == "gauge")
        lp::metrics::gauge(name).set(1);
      else
        lp::metrics::series(name).record(1);
    } catch (const lp::usage_error& e) {
      return e.what();
    }
    return {};
  }
  long episodes = 0;
};

// A service with run() alone, as a learner loop or an actor often is.
struct Idle {
  void run() {
    while (!lp::wait_for_stop(std::chrono::milliseconds(20))) {
    }
  }
};

struct Squares {
  std::vector<long> square(std::vector<long> xs) {
    for (auto& x : xs) x *= x;
    return xs;
  }
};

// The metrics of the node at `url`, as Prometheus would scrape them.
std::string scrape(const std::string& url, const std::string& secret) {
  httplib::Client http(url);
  http.set_read_timeout(std::chrono::seconds(10));
  auto reply = http.Get("/lp/v1/metrics", {{"Authorization", "Bearer " + secret}});
  REQUIRE(reply);
  REQUIRE(reply->status == 200);
  CHECK(reply->get_header_value("Content-Type").starts_with("text/plain; version=0.0.4"));
  return reply->body;
}

lp::json scrape_json(const std::string& url, const std::string& secret) {
  httplib::Client http(url);
  http.set_read_timeout(std::chrono::seconds(10));
  auto reply = http.Get("/lp/v1/metrics", {{"Authorization", "Bearer " + secret},
                                           {"Accept", "application/json"}});
  REQUIRE(reply);
  REQUIRE(reply->status == 200);
  return lp::json::parse(reply->body);
}

// A node's process as the status page polls it: each GET /lp/v1/metrics
// finds 100 more calls to add (and as many steps, and a second more of CPU)
// than the one before, from `start`. At `port` if given, as a restarted node
// may be.
struct polled_process {
  polled_process(int pid, double start, int port = 0) {
    http.Get("/lp/v1/metrics", [this, pid, start](const httplib::Request&,
                                                  httplib::Response& res) {
      double calls = start + 100.0 * polls++;
      lp::json add = {{"name", "add"},
                      {"calls", calls},
                      {"by_code", {{"200", calls}}},
                      {"latency_buckets",
                       std::vector<double>(lp::detail::latency_bounds.size() + 1, calls)},
                      {"fastest", 1e-5},
                      {"slowest", 2e-5},
                      {"in_flight", 0}};
      res.set_content(lp::json{{"pid", pid},
                               {"cpu_seconds", calls / 100},
                               {"connections", 1},
                               {"methods", lp::json::array({add})},
                               {"counters", {{"steps", calls}}}}
                          .dump(),
                      "application/json");
    });
    this->port = port ? (http.bind_to_port("127.0.0.1", port) ? port : -1)
                      : http.bind_to_any_port("127.0.0.1");
    REQUIRE(this->port > 0);
    thread = std::thread([this] { http.listen_after_bind(); });
  }
  ~polled_process() {
    http.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::atomic<int> polls{0};
};

// The value of the sample line that starts with `series` ("name{labels}").
std::optional<double> sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(text.substr(at + series.size() + 2));
}
}  // namespace m

LP_SERVICE(m::Recorder, episode, record_as);
LP_SERVICE(m::Idle);
LP_SERVICE(m::Squares, square);
LP_BATCHED(m::Squares, square, 8, std::chrono::milliseconds(5));

TEST_SUITE("metrics") {
  TEST_CASE("every call is counted by method and status, with its time and bytes") {
    lp::program p("metrics");
    auto counter = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(counter);
    for (int i = 0; i < 7; ++i) client.add(1);
    httplib::Client raw(running.urls().at("counter"));
    raw.set_default_headers({{"Authorization", "Bearer " + running.secret()}});
    CHECK(raw.Post("/lp/v1/call/add", "[1,2]", "application/json")->status == 400);
    CHECK(raw.Post("/lp/v1/call/no_such", "[]", "application/json")->status == 404);
    CHECK(raw.Post("/lp/v1/call/made_up_2", "[]", "application/json")->status == 404);

    auto text = m::scrape(running.urls().at("counter"), running.secret());
    CHECK(m::sample(text, R"(lp_calls_total{node="counter",method="add",code="200"})") ==
          7);
    CHECK(m::sample(text, R"(lp_calls_total{node="counter",method="add",code="400"})") ==
          1);
    CHECK(m::sample(text, R"(lp_calls_total{node="counter",method="get",code="200"})") ==
          0);
    // Made-up names share one label: a peer cannot grow the node's metrics.
    CHECK(m::sample(text,
                    R"x(lp_calls_total{node="counter",method="(none)",code="404"})x") ==
          2);
    CHECK(text.find("made_up_2") == std::string::npos);
    CHECK(
        m::sample(
            text,
            R"(lp_call_duration_seconds_bucket{node="counter",method="add",le="+Inf"})") ==
        8);
    CHECK(m::sample(text,
                    R"(lp_call_duration_seconds_count{node="counter",method="add"})") ==
          8);
    CHECK(*m::sample(text,
                     R"(lp_call_duration_seconds_sum{node="counter",method="add"})") > 0);
    CHECK(m::sample(text, R"(lp_calls_in_flight{node="counter",method="add"})") == 0);
    CHECK(*m::sample(text,
                     R"(lp_call_request_bytes_total{node="counter",method="add"})") > 0);
    CHECK(*m::sample(text, R"(lp_call_reply_bytes_total{node="counter",method="add"})") >
          0);
    CHECK(*m::sample(text, R"(lp_process_resident_memory_bytes{node="counter"})") > 1e6);
    CHECK(*m::sample(text, R"(lp_process_cpu_seconds_total{node="counter"})") > 0);
    CHECK(*m::sample(text, R"(lp_process_threads{node="counter"})") > 1);
    CHECK(*m::sample(text, R"(lp_open_connections{node="counter"})") >= 1);
    CHECK(m::sample(text, R"(lp_restarts_total{node="counter"})") == 0);
    CHECK(text.find("# TYPE lp_calls_total counter\n") != std::string::npos);
    CHECK(text.find("# TYPE lp_call_duration_seconds histogram\n") != std::string::npos);
  }

  TEST_CASE("a node with no methods is in every family of calls, at 0") {
    lp::program p("metrics");
    p.add_node<m::Idle>("idle");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto text = m::scrape(running.urls().at("idle"), running.secret());
    INFO(text);
    for (const char* family :
         {"lp_calls_total counter", "lp_call_duration_seconds histogram",
          "lp_calls_in_flight gauge", "lp_call_request_bytes_total counter",
          "lp_call_reply_bytes_total counter"})
      CHECK(text.find(std::string("# TYPE ") + family + "\n") != std::string::npos);
    // Calls to a node with no methods are calls to names it does not have.
    CHECK(m::sample(text,
                    R"x(lp_calls_total{node="idle",method="(none)",code="404"})x") == 0);
    CHECK(m::sample(text,
                    R"x(lp_call_duration_seconds_count{node="idle",method="(none)"})x") ==
          0);
    CHECK(m::sample(text, R"x(lp_calls_in_flight{node="idle",method="(none)"})x") == 0);
    CHECK(m::sample(text,
                    R"x(lp_call_request_bytes_total{node="idle",method="(none)"})x") ==
          0);
    CHECK(m::sample(text,
                    R"x(lp_call_reply_bytes_total{node="idle",method="(none)"})x") == 0);
  }

  TEST_CASE("a method called once shows that call's time as its p50 and its p99") {
    using test_process::eventually;
    lp::program p("metrics");
    auto counter = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    running.client(counter).add(1);
    auto url = running.urls().at("counter");
    auto add = m::scrape_json(url, running.secret())["methods"][0];
    REQUIRE(add["name"] == "add");
    REQUIRE(add["calls"] == 1);
    REQUIRE(add["fastest"].is_number());
    CHECK(add["fastest"] == add["slowest"]);
    CHECK(add["fastest"].get<double>() > 0);

    lp::detail::status_server page(p, lp::detail::policy_kind::test_mt, running.secret(),
                                   [&] {
                                     lp::detail::node_status node;
                                     node.label = "counter";
                                     node.state = lp::detail::node_state::serving;
                                     node.url = url;
                                     return std::vector{node};
                                   });
    page.start("127.0.0.1", 0);
    lp::json shown;
    REQUIRE(eventually(
        [&] {
          auto methods = lp::json::parse(page.status_json())["nodes"][0].value(
              "methods", lp::json::array());
          if (methods.empty()) return false;
          shown = methods[0];
          return true;
        },
        std::chrono::seconds(15)));
    INFO(shown.dump());
    // Not two edges of the bucket the call fell in.
    CHECK(shown["p50"].get<double>() == doctest::Approx(add["fastest"].get<double>()));
    CHECK(shown["p99"].get<double>() == doctest::Approx(add["fastest"].get<double>()));
  }

  TEST_CASE("a restarted node's figures are its new process's, never a negative rate") {
    using test_process::eventually;
    lp::program p("restarted");
    p.add_node<t::Counter>("counter");
    std::mutex mutex;
    std::string url;
    lp::detail::status_server page(p, lp::detail::policy_kind::local_mp, "", [&] {
      lp::detail::node_status node;
      node.label = "counter";
      node.state = lp::detail::node_state::serving;
      std::lock_guard lock(mutex);
      node.url = url;
      return std::vector{node};
    });
    auto node = [&] { return lp::json::parse(page.status_json())["nodes"].at(0); };
    auto old = std::make_unique<m::polled_process>(101, 5000);
    int port = old->port;
    {
      std::lock_guard lock(mutex);
      url = old->url();
    }
    page.start("127.0.0.1", 0);
    REQUIRE(eventually([&] { return old->polls >= 3; }, std::chrono::seconds(15)));
    auto before = node();
    CHECK(before["methods"][0]["per_second"].get<double>() > 0);

    // Killed and started again at the same address: a new pid, from 0.
    old.reset();
    auto restarted = std::make_unique<m::polled_process>(202, 0, port);
    REQUIRE(eventually([&] { return restarted->polls >= 3; }, std::chrono::seconds(15)));
    auto after = node();
    INFO(after.dump());
    CHECK(after["pid"] == 202);
    REQUIRE(after["calls_per_second"].size() >= 3);
    for (const auto& point : after["calls_per_second"])
      CHECK(point[1].get<double>() >= 0);
    CHECK(after["methods"][0]["per_second"].get<double>() > 0);
    CHECK(after["cpu_percent"].get<double>() >= 0);
    CHECK(after["counters"]["steps"].get<double>() < 5000);
    // The page says whose figures it shows, and when a new process began.
    REQUIRE(after["new_process_at"].size() == 1);
    CHECK(after["since"] == after["new_process_at"][0]);
    CHECK(after["since"].get<double>() > before["since"].get<double>());
  }

  TEST_CASE("the metrics need the secret; health does not") {
    lp::program p("metrics");
    p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    httplib::Client http(running.urls().at("counter"));
    auto refused = http.Get("/lp/v1/metrics");
    REQUIRE(refused);
    CHECK(refused->status == 401);
    auto wrong = http.Get("/lp/v1/metrics", {{"Authorization", "Bearer 0123"}});
    CHECK(wrong->status == 401);
    CHECK(http.Get("/lp/v1/health")->status == 200);
  }

  TEST_CASE("direct calls are counted as HTTP ones are") {
    lp::program p("metrics");
    auto counter = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::direct_calls<lp::test_multi_threading>>(p);
    for (int i = 0; i < 5; ++i) running.client(counter).add(1);
    auto text = m::scrape(running.urls().at("counter"), running.secret());
    CHECK(m::sample(text, R"(lp_calls_total{node="counter",method="add",code="200"})") ==
          5);
  }

  // A call that ends at its caller's deadline (lp::replay's limiter waits
  // until then, and answers 504 deadline_exceeded) counts under its own
  // code, in both forms of the metrics, and is in flight only while it runs;
  // so is a slow method whose caller gave up before it ended.
  TEST_CASE(
      "a call that ends with 504 counts under code 504, and is in flight only until it "
      "ends") {
    using test_process::eventually;
    lp::program p("metrics");
    auto replay = p.add_node<lp::replay<long>>(
        "replay",
        lp::replay_config{{{.name = "t", .limiter = lp::rate_limiter::min_size(5)}}});
    auto sleepy = p.add_node<t::Sleepy>("sleepy");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto url = running.urls().at("replay");
    // The node's own answer, at the deadline the call sent (less its
    // allowance for the reply): a caller that waits longer hears it.
    httplib::Client http(url);
    http.set_read_timeout(std::chrono::seconds(30));
    auto reply = http.Post(
        "/lp/v1/call/sample",
        {{"Authorization", "Bearer " + running.secret()}, {"Lp-Deadline-Ms", "200"}},
        R"(["t", 1])", "application/json");
    REQUIRE(reply);
    REQUIRE(reply->status == 504);
    // And a C++ caller's, which may hear the node's 504 or give up first.
    CHECK_THROWS_AS(running.client(replay)
                        .with_deadline(std::chrono::milliseconds(200))
                        .sample("t", 1),
                    lp::deadline_exceeded);
    auto sample_504 = R"(lp_calls_total{node="replay",method="sample",code="504"})";
    std::string text;
    REQUIRE(eventually(
        [&] {
          text = m::scrape(url, running.secret());
          return m::sample(text, sample_504) == 2;
        },
        std::chrono::seconds(10)));
    INFO(text);
    CHECK(text.find(R"(method="sample",code="other")") == std::string::npos);
    CHECK(m::sample(text, R"(lp_calls_in_flight{node="replay",method="sample"})") == 0);
    CHECK(m::sample(text,
                    R"(lp_call_duration_seconds_count{node="replay",method="sample"})") ==
          2);
    auto json = m::scrape_json(url, running.secret());
    auto methods = json.at("methods");
    auto sample = std::find_if(
        methods.begin(), methods.end(),
        [](const lp::json& method) { return method.at("name") == "sample"; });
    REQUIRE(sample != methods.end());
    CHECK(sample->at("by_code") == lp::json{{"504", 2}});
    CHECK(sample->at("in_flight") == 0);

    // A slow method past its caller's deadline: the caller has given up,
    // the node still answers (in flight), then counts the call as it ended.
    auto sleeper = running.client(sleepy).with_deadline(std::chrono::milliseconds(100));
    CHECK_THROWS_AS(sleeper.sleep(2000), lp::deadline_exceeded);
    auto slept = running.urls().at("sleepy");
    auto in_flight = R"(lp_calls_in_flight{node="sleepy",method="sleep"})";
    CHECK(m::sample(m::scrape(slept, running.secret()), in_flight) == 1);
    REQUIRE(eventually(
        [&] {
          text = m::scrape(slept, running.secret());
          return m::sample(text, in_flight) == 0;
        },
        std::chrono::seconds(10)));
    CHECK(m::sample(text, R"(lp_calls_total{node="sleepy",method="sleep",code="200"})") ==
          1);
    CHECK(running.stop());
  }

  TEST_CASE("a batched method's batch sizes") {
    lp::program p("metrics");
    auto squares = p.add_node<m::Squares>("squares");
    auto running = lp::launch<lp::test_multi_threading>(p);
    std::vector<std::thread> callers;
    for (int i = 0; i < 8; ++i)
      callers.emplace_back([&, i] { CHECK(running.client(squares).square(i) == i * i); });
    for (auto& caller : callers) caller.join();
    auto text = m::scrape(running.urls().at("squares"), running.secret());
    CHECK(m::sample(text,
                    R"(lp_calls_total{node="squares",method="square",code="200"})") == 8);
    auto batches =
        m::sample(text, R"(lp_batch_size_count{node="squares",method="square"})");
    REQUIRE(batches);
    CHECK(*batches >= 1);
    CHECK(*batches <= 8);
    CHECK(m::sample(text, R"(lp_batch_size_sum{node="squares",method="square"})") == 8);
  }

  TEST_CASE("a node's own figures: counter, gauge, series") {
    lp::program p("metrics");
    auto recorder = p.add_node<m::Recorder>("learner");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(recorder);
    for (double reward : {0.5, -1.0, 2.0}) client.episode(reward);
    auto url = running.urls().at("learner");
    auto text = m::scrape(url, running.secret());
    CHECK(m::sample(text, R"(episodes_total{node="learner"})") == 3);
    CHECK(text.find("# TYPE episodes_total counter\n") != std::string::npos);
    CHECK(m::sample(text, R"(replay_size{node="learner"})") == 30);
    CHECK(m::sample(text, R"(episode_return{node="learner"})") == 2);
    auto figures = m::scrape_json(url, running.secret());
    CHECK(figures["counters"]["episodes"] == 3);
    CHECK(figures["gauges"]["replay_size"] == 30);
    auto points = figures["series"]["episode_return"];
    REQUIRE(points.size() == 3);
    CHECK(points[0][1] == 0.5);
    CHECK(points[2][1] == 2.0);
    CHECK(points[0][0].get<double>() > 1.7e9);  // seconds since the epoch
    CHECK(figures["methods"][0]["name"] == "episode");
    CHECK(figures["methods"][0]["calls"] == 3);
  }

  TEST_CASE("bad metric names are a usage_error that names the rule") {
    lp::program p("metrics");
    auto recorder = p.add_node<m::Recorder>("learner");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto client = running.client(recorder);
    auto error = [&](std::string kind, std::string name) {
      return client.record_as(kind, name);
    };
    CHECK(error("counter", "fine_name_2") == "");
    CHECK(error("counter", "2fast").find("starts with a letter or _") !=
          std::string::npos);
    CHECK(error("gauge", "with space").find("only letters, digits and _") !=
          std::string::npos);
    CHECK(error("series", "x-y").find("[a-zA-Z_][a-zA-Z0-9_]*") != std::string::npos);
    CHECK(error("gauge", "").find("cannot be empty") != std::string::npos);
    CHECK(error("counter", "lp_calls").find("kept for the library") != std::string::npos);
    CHECK(error("counter", std::string(101, 'a')).find("at most 100") !=
          std::string::npos);
    CHECK(error("gauge", "<script>").find("[lp.usage_error] lp::metrics::gauge(") == 0);
    CHECK(error("negative", "fine_name_2").find("a counter only goes up") !=
          std::string::npos);
    // One name, one kind.
    CHECK(error("gauge", "fine_name_2").find("already has a counter") !=
          std::string::npos);
    // Outside a node there is no node to record for.
    CHECK_THROWS_WITH_AS(lp::metrics::counter("episodes"),
                         doctest::Contains("outside a node"), lp::usage_error);
  }

  TEST_CASE("label values are escaped as the text format asks") {
    CHECK(lp::detail::prometheus_label_value("plain/0") == "plain/0");
    CHECK(lp::detail::prometheus_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
    CHECK(lp::detail::prometheus_label_value("π ✓") == "π ✓");
  }
}
