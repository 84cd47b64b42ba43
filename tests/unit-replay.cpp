// lp::replay<Item>: its samplers' distributions, its removers, its rate
// limiters under concurrent clients, its waits' ends (a deadline, a stop),
// and its items across a kill -9.
#include <signal.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/json.hpp>
#include <launchpad/replay.hpp>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "command.hpp"
#include "processes/scenarios.hpp"
#include "scenario_launch.hpp"

namespace replay_test {
using namespace std::chrono_literals;
using test_process::eventually;

lp::replay_config one_table(lp::table_config table, std::uint64_t seed = 42) {
  return {{std::move(table)}, seed};
}

// Draw counts of each item over `draws` single samples.
std::map<lp::replay_key, long> histogram(lp::replay<long>& r, long draws) {
  std::map<lp::replay_key, long> seen;
  for (long i = 0; i < draws; ++i) ++seen[r.sample("t", 1).front().key];
  return seen;
}

std::vector<long> items_of(const std::vector<lp::sampled<long>>& drawn) {
  std::vector<long> out;
  for (auto& d : drawn) out.push_back(d.item);
  return out;
}

// A file of the repository, found from this test's own place.
std::string repository_file(const std::string& path) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path().parent_path() / path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// C++ text without its comments (string literals kept as they are).
std::string without_comments(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      auto end = i + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      out += text.substr(i, end + 1 - i);
      i = end;
    } else if (text.substr(i, 2) == "//") {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else {
      out += text[i];
    }
  }
  return out;
}

// Whitespace as one space, and none beside brackets or before a comma: a
// declaration reads the same however a line is broken.
std::string squeezed(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t') {
      space = !out.empty();
      continue;
    }
    bool tight =
        std::strchr("()<>[],;", c) || (!out.empty() && std::strchr("(<[", out.back()));
    if (space && !tight) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The public members that `opening` ("class replay {", "struct table_config
// {") declares in `header`, each as a declaration ending in ';': member
// functions without their bodies or a constructor's initializers, data
// members with their defaults. static_asserts are no members.
std::vector<std::string> public_declarations(const std::string& header,
                                             const std::string& opening) {
  auto text = without_comments(header);
  auto at = text.find(opening);
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << opening << "' in the header");
  bool is_public = opening.starts_with("struct");
  std::vector<std::string> found;
  std::string current;
  auto emit = [&] {
    auto declaration = squeezed(current);
    current.clear();
    // A constructor's initializers follow a lone ':' after its parameters.
    if (auto open = declaration.find('('); open != std::string::npos) {
      auto i = open;
      for (int depth = 0; i < declaration.size(); ++i) {
        depth += declaration[i] == '(' ? 1 : declaration[i] == ')' ? -1 : 0;
        if (depth == 0) break;
      }
      for (; i + 1 < declaration.size(); ++i)
        if (declaration[i] == ':' && declaration[i + 1] != ':' &&
            declaration[i - 1] != ':') {
          declaration = squeezed(declaration.substr(0, i));
          break;
        }
    }
    if (is_public && !declaration.empty() && !declaration.starts_with("static_assert"))
      found.push_back(declaration + ";");
  };
  int parens = 0;
  for (auto i = at + opening.size(); i < text.size(); ++i) {
    char c = text[i];
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (parens > 0 || (c != '{' && c != ';' && c != '}' && c != ':')) {
      current += c;
      continue;
    }
    if (c == '}') break;  // the class's end
    if (c == ':') {
      auto word = squeezed(current);
      if (text[i + 1] != ':' &&
          (word == "public" || word == "private" || word == "protected")) {
        is_public = word == "public";
        current.clear();
      } else {
        current += c;
        if (text[i + 1] == ':') current += text[++i];
      }
      continue;
    }
    if (c == '{') {  // a member function's body: skipped
      int depth = 1;
      while (depth > 0 && ++i < text.size())
        depth += text[i] == '{' ? 1 : text[i] == '}' ? -1 : 0;
    }
    emit();
  }
  return found;
}
}  // namespace replay_test

using namespace std::chrono_literals;
using replay_test::one_table;

TEST_SUITE("replay") {
  TEST_CASE("prioritized sampling matches p_i^alpha / sum p^alpha") {
    double alpha = 0.7;
    lp::replay<long> r(
        one_table({.name = "t", .sampler = lp::sampler::prioritized(alpha)}));
    std::vector<double> priorities = {0.5, 1, 2, 3, 5, 8, 0, 13};
    std::vector<long> items(priorities.size());
    auto keys = r.insert_batch("t", items, priorities);
    double total = 0;
    for (double p : priorities) total += std::pow(p, alpha);
    const long draws = 200'000;
    std::map<lp::replay_key, double> reported;
    std::map<lp::replay_key, long> seen;
    for (auto& d : r.sample("t", draws)) {
      ++seen[d.key];
      reported[d.key] = d.probability;
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      CAPTURE(i);
      double expected = std::pow(priorities[i], alpha) / total;
      double observed = static_cast<double>(seen[keys[i]]) / draws;
      // Five standard errors of a frequency over 200,000 draws.
      CHECK(std::abs(observed - expected) <=
            5 * std::sqrt(expected * (1 - expected) / draws) + 1e-9);
      if (priorities[i] == 0)
        CHECK(seen[keys[i]] == 0);
      else
        CHECK(reported[keys[i]] == doctest::Approx(expected).epsilon(1e-9));
    }

    // New priorities take effect at once.
    r.update_priorities("t", {keys[6], keys[7]}, {100, 0});
    auto after = replay_test::histogram(r, 20'000);
    CHECK(after[keys[7]] == 0);
    total = 0;
    for (std::size_t i = 0; i < 6; ++i) total += std::pow(priorities[i], alpha);
    total += std::pow(100.0, alpha);
    CHECK(after[keys[6]] / 20'000.0 ==
          doctest::Approx(std::pow(100.0, alpha) / total).epsilon(0.05));
  }

  TEST_CASE("uniform sampling is uniform (chi-square) and reports 1/size") {
    lp::replay<long> r(one_table({.name = "t", .sampler = lp::sampler::uniform()}));
    const int n = 10;
    for (long i = 0; i < n; ++i)
      r.insert("t", i, static_cast<double>(i));  // priorities ignored
    const long draws = 100'000;
    std::map<long, long> seen;
    long misreported = 0;
    for (auto& d : r.sample("t", draws)) {
      ++seen[d.item];
      misreported += std::abs(d.probability - 1.0 / n) > 1e-12;
    }
    CHECK(misreported == 0);
    double expected = static_cast<double>(draws) / n, chi2 = 0;
    for (long i = 0; i < n; ++i) chi2 += std::pow(seen[i] - expected, 2) / expected;
    // 9 degrees of freedom: 27.88 is the 0.999 quantile.
    CHECK(chi2 < 27.88);
  }

  TEST_CASE("fifo, lifo, max_heap and min_heap are deterministic") {
    auto drain = [](lp::sampler s) {
      lp::replay<long> r(one_table({.name = "t", .sampler = s, .max_times_sampled = 1}));
      r.insert_batch("t", {10, 11, 12, 13, 14}, {3, 1, 4, 1, 5});
      return replay_test::items_of(r.sample("t", 5));
    };
    CHECK(drain(lp::sampler::fifo()) == std::vector<long>{10, 11, 12, 13, 14});
    CHECK(drain(lp::sampler::lifo()) == std::vector<long>{14, 13, 12, 11, 10});
    // Among equal priorities, the oldest first.
    CHECK(drain(lp::sampler::max_heap()) == std::vector<long>{14, 12, 10, 11, 13});
    CHECK(drain(lp::sampler::min_heap()) == std::vector<long>{11, 13, 10, 12, 14});

    // Without max_times_sampled an item stays: fifo draws the oldest again.
    lp::replay<long> r(one_table({.name = "t", .sampler = lp::sampler::fifo()}));
    r.insert_batch("t", {1, 2}, {0, 0});
    auto twice = r.sample("t", 2);
    CHECK(replay_test::items_of(twice) == std::vector<long>{1, 1});
    CHECK(twice[1].times_sampled == 2);
    CHECK(twice[1].probability == 1.0);
  }

  TEST_CASE("removers make room in a full table") {
    auto kept = [](lp::remover rm) {
      lp::replay<long> r(one_table({.name = "t",
                                    .sampler = lp::sampler::fifo(),
                                    .remover = rm,
                                    .max_size = 3,
                                    .max_times_sampled = 1}));
      r.insert_batch("t", {1, 2, 3, 4, 5}, {5, 1, 4, 2, 3});
      auto info = r.info().front();
      CHECK(info.size == 3);
      CHECK(info.removed == 2);
      auto items = replay_test::items_of(r.sample("t", 3));
      std::sort(items.begin(), items.end());
      return items;
    };
    CHECK(kept(lp::remover::fifo()) == std::vector<long>{3, 4, 5});
    CHECK(kept(lp::remover::lifo()) == std::vector<long>{1, 2, 5});
    CHECK(kept(lp::remover::lowest_priority()) == std::vector<long>{1, 3, 5});
    CHECK(kept(lp::remover::highest_priority()) == std::vector<long>{2, 4, 5});
    CHECK(kept(lp::remover::uniform()).size() == 3);
  }

  // docs/replay.md says which item each remover drops; the LIFO one, item
  // by item: the newest of those already in, never the one coming in.
  TEST_CASE(
      "the lifo remover drops the newest item already in, and the new one goes in") {
    lp::replay<long> r(one_table({.name = "t",
                                  .sampler = lp::sampler::fifo(),
                                  .remover = lp::remover::lifo(),
                                  .max_size = 3}));
    for (long i = 1; i <= 3; ++i) r.insert("t", i, 1);
    // The items in, oldest first (a checkpoint lists them by key).
    auto in = [&] {
      auto state = r.lp_save();
      std::vector<long> items;
      for (auto& saved : state.tables.front().items) items.push_back(saved.item);
      return items;
    };
    r.insert("t", 4, 1);  // 3 goes
    CHECK(in() == std::vector<long>{1, 2, 4});
    r.insert("t", 5, 1);  // 4 goes
    CHECK(in() == std::vector<long>{1, 2, 5});
    CHECK(r.info().front().removed == 2);
  }

  // docs/replay.md, "The API, in full": every public member of lp::replay
  // and of what configures it, with its defaults, as replay.hpp declares it.
  TEST_CASE(
      "docs/replay.md gives every public declaration of lp::replay and its "
      "configuration") {
    auto header = replay_test::repository_file("include/launchpad/replay.hpp");
    auto doc = replay_test::squeezed(replay_test::repository_file("docs/replay.md"));
    std::size_t checked = 0;
    for (auto opening :
         {"class sampler {", "class remover {", "class rate_limiter {",
          "struct table_config {", "struct replay_config {", "class replay {"}) {
      auto declarations = replay_test::public_declarations(header, opening);
      CAPTURE(opening);
      CHECK(!declarations.empty());
      for (auto& declaration : declarations) {
        CAPTURE(declaration);
        CHECK(doc.find(declaration) != std::string::npos);
        ++checked;
      }
    }
    // The extraction itself: a member function, a default, a constructor.
    auto replay = replay_test::public_declarations(header, "class replay {");
    CHECK(std::find(replay.begin(), replay.end(),
                    "explicit replay(replay_config config);") != replay.end());
    CHECK(std::find(replay.begin(), replay.end(),
                    "std::vector<table_info> info() const;") != replay.end());
    auto table = replay_test::public_declarations(header, "struct table_config {");
    CHECK(std::find(table.begin(), table.end(), "std::size_t max_size = 1'000'000;") !=
          table.end());
    CHECK(checked > 30);
  }

  // A priority that is negative, NaN or infinite is the caller's mistake:
  // 400 bad_request, as an argument of the wrong type is, not a 500.
  TEST_CASE(
      "a negative, NaN or infinite priority is a bad request (400), and the node serves "
      "on") {
    lp::program p("replay_bad_priority");
    auto node = p.add_node<lp::replay<long>>("replay", one_table({.name = "t"}));
    auto running = lp::launch<lp::test_multi_threading>(p);
    httplib::Client http(running.urls().at("replay"));
    http.set_read_timeout(std::chrono::seconds(30));
    // ["t", 1, priority] in CBOR: JSON has no NaN or infinity.
    auto body = [](double priority) {
      std::string cbor = "\x83\x61t\x01\xfb";
      std::uint64_t bits;
      std::memcpy(&bits, &priority, sizeof bits);
      for (int shift = 56; shift >= 0; shift -= 8)
        cbor += static_cast<char>(bits >> shift);
      return cbor;
    };
    for (double priority : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity()}) {
      CAPTURE(priority);
      auto reply = http.Post("/lp/v1/call/insert",
                             {{"Authorization", "Bearer " + running.secret()},
                              {"Accept", "application/json"}},
                             body(priority), "application/cbor");
      REQUIRE(reply);
      CHECK(reply->status == 400);
      INFO(reply->body);
      auto error = lp::json::parse(reply->body).at("error");
      CHECK(error.at("code") == "bad_request");
      CHECK(error.at("node") == "replay");
      CHECK(error.at("method") == "insert");
      CHECK(error.at("message").get<std::string>().starts_with("argument 3 of insert: "));
      CHECK(error.at("message").get<std::string>().find("finite numbers >= 0") !=
            std::string::npos);
    }
    auto json_reply =
        http.Post("/lp/v1/call/insert", {{"Authorization", "Bearer " + running.secret()}},
                  R"(["t", 1, -0.5])", "application/json");
    REQUIRE(json_reply);
    CHECK(json_reply->status == 400);
    // A C++ caller gets lp::remote_error, with the status and the code.
    auto replay = running.client(node);
    try {
      replay.insert_batch("t", {1, 2}, {1, std::numeric_limits<double>::quiet_NaN()});
      FAIL("insert_batch took a NaN priority");
    } catch (const lp::remote_error& e) {
      CHECK(e.status() == 400);
      CHECK(e.code() == "bad_request");
      CHECK(e.message().starts_with("argument 3 of insert_batch: "));
    }
    // The node serves on, and nothing of the refused calls went in.
    auto key = replay.insert("t", 7, 1);
    try {
      replay.update_priorities("t", {key}, {-std::numeric_limits<double>::infinity()});
      FAIL("update_priorities took an infinite priority");
    } catch (const lp::remote_error& e) {
      CHECK(e.status() == 400);
      CHECK(e.code() == "bad_request");
    }
    auto info = replay.info().front();
    CHECK(info.size == 1);
    CHECK(info.inserts == 1);
    auto drawn = replay.sample("t", 1).front();
    CHECK(drawn.item == 7);
    CHECK(drawn.priority == 1);
    // On a plain object, outside a call, the same mistakes are lp::usage_error.
    lp::replay<long> plain(one_table({.name = "t"}));
    CHECK_THROWS_AS(plain.insert("t", 1, std::numeric_limits<double>::quiet_NaN()),
                    lp::usage_error);
    CHECK_THROWS_AS(plain.insert("t", 1, std::numeric_limits<double>::infinity()),
                    lp::usage_error);
    CHECK(running.stop());
  }

  TEST_CASE("remove, info, several tables, and mistakes named") {
    lp::replay<long> r(
        {{{.name = "a"}, {.name = "b", .sampler = lp::sampler::lifo()}}, 1});
    auto keys = r.insert_batch("a", {1, 2, 3}, {1, 1, 1});
    r.insert("b", 9, 1);
    CHECK(r.remove("a", {keys[0], keys[0], 12345}) == 1);
    auto info = r.info();
    REQUIRE(info.size() == 2);
    CHECK(info[0].name == "a");
    CHECK(info[0].size == 2);
    CHECK(info[0].inserts == 3);
    CHECK(info[1].size == 1);
    CHECK(r.sample("b", 1).front().item == 9);
    CHECK(r.info()[1].samples == 1);
    CHECK_THROWS_WITH_AS(r.sample("c", 1), doctest::Contains("its tables are 'a', 'b'"),
                         lp::usage_error);
    CHECK_THROWS_AS(r.insert("a", 1, -1), lp::usage_error);
    CHECK_THROWS_AS(r.insert_batch("a", {1, 2}, {1}), lp::usage_error);
    CHECK_THROWS_WITH_AS(lp::rate_limiter::sample_to_insert_ratio(4, 10, 2),
                         doctest::Contains("at least max(1, ratio)"), lp::usage_error);
    CHECK_THROWS_AS(lp::replay<long>(lp::replay_config{{{.name = "no spaces"}}}),
                    lp::usage_error);
    CHECK_THROWS_AS(lp::replay<long>(lp::replay_config{}), lp::usage_error);
  }

  TEST_CASE("a table's figures are the node's metrics") {
    lp::program p("replay_metrics");
    auto node = p.add_node<lp::replay<long>>("replay", one_table({.name = "t"}));
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto replay = running.client(node);
    replay.insert_batch("t", {1, 2, 3}, {1, 1, 1});
    replay.sample("t", 2);
    httplib::Client http(running.urls().at("replay"));
    http.set_read_timeout(std::chrono::seconds(10));
    auto reply =
        http.Get("/lp/v1/metrics", {{"Authorization", "Bearer " + running.secret()}});
    REQUIRE(reply);
    REQUIRE(reply->status == 200);
    INFO(reply->body);
    for (auto line : {"replay_t_size{node=\"replay\"} 3\n",
                      "replay_t_inserts_total{node=\"replay\"} 3\n",
                      "replay_t_samples_total{node=\"replay\"} 2\n"})
      CHECK(reply->body.find(line) != std::string::npos);
    CHECK(reply->body.find("replay_t_blocked_seconds_total") != std::string::npos);
    CHECK(running.stop());
  }

  TEST_CASE("the limiters' arithmetic: min_size, ratio, queue") {
    lp::detail::rate_limit min_size{lp::rate_limiter::min_size(3).spec};
    CHECK_FALSE(min_size.can_sample(1, 2));
    CHECK(min_size.can_sample(1000, 3));
    CHECK(min_size.can_insert(1000, 1'000'000));

    // r = 2, min_size 10, error_buffer 4: diff = 2 * inserts - samples must
    // stay in [20 - 4, 20 + 4] once 10 items are in.
    lp::detail::rate_limit ratio{lp::rate_limiter::sample_to_insert_ratio(2, 10, 4).spec};
    ratio.inserts = 10;
    CHECK(ratio.can_sample(4, 10));  // diff 20 -> 16
    CHECK_FALSE(ratio.can_sample(5, 10));
    CHECK(ratio.can_insert(2, 10));  // diff 20 -> 24
    CHECK_FALSE(ratio.can_insert(3, 10));

    lp::replay<long> q({{lp::table_config::queue("q", 2)}, 1});
    q.insert("q", 1, 0);
    q.insert("q", 2, 0);
    CHECK_FALSE(
        lp::detail::rate_limit{lp::rate_limiter::queue(2).spec, 2, 0}.can_insert(1, 2));
    CHECK(replay_test::items_of(q.sample("q", 2)) == std::vector<long>{1, 2});
    CHECK(q.info().front().size == 0);
  }

  TEST_CASE(
      "sample_to_insert_ratio holds within error_buffer: 8 inserting and 2 sampling "
      "clients") {
    const double r = 2, buffer = 6;
    const std::size_t min_size = 10;
    lp::program p("replay_ratio");
    auto node = p.add_node<lp::replay<long>>(
        "replay", one_table({.name = "t",
                             .limiter = lp::rate_limiter::sample_to_insert_ratio(
                                 r, min_size, buffer)}));
    auto running = lp::launch<lp::test_multi_threading>(p);
    std::atomic<int> inserting{8};
    std::atomic<bool> broken{false};
    std::vector<std::thread> clients;
    for (int w = 0; w < 8; ++w)
      clients.emplace_back([&, w] {
        auto replay = running.client(node).with_deadline(30s);
        for (long i = 0; i < 150; ++i) replay.insert("t", w * 1000 + i, 1.0);
        --inserting;
      });
    std::atomic<long> sampled{0}, gave_up{0};
    for (int s = 0; s < 2; ++s)
      clients.emplace_back([&] {
        auto replay = running.client(node).with_deadline(200ms);
        for (;;) {
          try {
            sampled += static_cast<long>(replay.sample("t", 1).size());
          } catch (const lp::deadline_exceeded&) {
            ++gave_up;
            if (inserting == 0) return;
          }
        }
      });
    // Every snapshot, taken under the table's lock, is within the window.
    auto observer = running.client(node);
    double offset = r * static_cast<double>(min_size);
    long snapshots = 0;
    while (inserting > 0) {
      auto t = observer.info().front();
      if (t.inserts >= min_size) {
        double diff = r * static_cast<double>(t.inserts) - static_cast<double>(t.samples);
        if (diff < offset - buffer || diff > offset + buffer) {
          broken = true;
          INFO("inserts " << t.inserts << ", samples " << t.samples);
          CHECK(false);
        }
        ++snapshots;
      }
    }
    for (auto& c : clients) c.join();
    auto t = observer.info().front();
    CHECK(t.inserts == 1200);
    // The node gives up 20 ms before these callers (caller_deadline), so
    // their samples reach them; only a reply slower than that (a loaded
    // machine, a sanitizer) is one the node counts and the caller, told
    // lp::deadline_exceeded, never sees.
    INFO("samples the callers saw " << sampled << ", deadlines they met " << gave_up);
    CHECK(static_cast<long>(t.samples) >= sampled.load());
    CHECK(static_cast<long>(t.samples) - sampled.load() <= gave_up.load());
    double diff = r * static_cast<double>(t.inserts) - static_cast<double>(t.samples);
    CHECK(diff >= offset - buffer);
    CHECK(diff <= offset + buffer);
    // The ratio made each side wait for the other.
    CHECK(t.insert_blocked_seconds > 0);
    CHECK(snapshots > 0);
    CHECK_FALSE(broken);
    CHECK(running.stop());
  }

  TEST_CASE("a blocked sample ends with lp::deadline_exceeded at the caller's deadline") {
    lp::program p("replay_deadline");
    auto node = p.add_node<lp::replay<long>>(
        "replay", one_table({.name = "t", .limiter = lp::rate_limiter::min_size(5)}));
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto replay = running.client(node);
    replay.insert("t", 1, 1);
    auto start = std::chrono::steady_clock::now();
    // The node gives up a tenth of the time before the caller, so that its
    // answer, saying why, usually ends the call; on a loaded machine its
    // reply may still come after the caller's clock has run out.
    CHECK_THROWS_AS(replay.with_deadline(300ms).sample("t", 1), lp::deadline_exceeded);
    auto waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= 260ms);
    // A caller that waits longer than it says (curl with the header) sees
    // the node's own answer at the deadline it sent, less the allowance.
    httplib::Client http(running.urls().at("replay"));
    http.set_read_timeout(std::chrono::seconds(30));
    start = std::chrono::steady_clock::now();
    auto reply = http.Post(
        "/lp/v1/call/sample",
        {{"Authorization", "Bearer " + running.secret()}, {"Lp-Deadline-Ms", "300"}},
        R"(["t", 1])", "application/json");
    REQUIRE(reply);
    CHECK(reply->status == 504);
    CHECK(reply->body.find("\"deadline_exceeded\"") != std::string::npos);
    CHECK(reply->body.find("waited on the rate limiter until the caller's deadline") !=
          std::string::npos);
    waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= 260ms);
    CHECK(waited < 3s);
    CHECK(waited < 3s);
    // The node stopped waiting too: its handler is free, and counted the wait.
    REQUIRE(test_process::eventually(
        [&] { return replay.info().front().sample_blocked_seconds >= 0.25; }, 5s));
    CHECK(replay.info().front().sample_blocked_seconds < 2);
    CHECK(running.stop());
  }

  TEST_CASE("a blocked sample ends promptly and cleanly when the program stops") {
    lp::program p("replay_stop");
    auto node = p.add_node<lp::replay<long>>(
        "replay", one_table({.name = "t", .limiter = lp::rate_limiter::min_size(5)}));
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto replay = running.client(node).with_deadline(60s);
    REQUIRE(replay.info().size() == 1);  // serving
    std::atomic<bool> ended{false};
    std::exception_ptr failure;
    std::thread waiting([&] {
      try {
        replay.sample("t", 1);
      } catch (...) {
        failure = std::current_exception();
      }
      ended = true;
    });
    std::this_thread::sleep_for(200ms);
    CHECK_FALSE(ended);
    auto start = std::chrono::steady_clock::now();
    CHECK(running.stop());
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    REQUIRE(test_process::eventually([&] { return ended.load(); }, 5s));
    waiting.join();
    REQUIRE(failure);
    CHECK_THROWS_AS(std::rethrow_exception(failure), lp::transport_error);
    CHECK(running.summary().empty());
  }

  TEST_CASE("a replay node killed with kill -9 restarts with its items") {
    using scenarios::Step;
    test_process::scratch dir;
    lp::program p("scenario_replayed");
    scenarios::make(p, "replayed", dir.path);
    auto options = test_process::scenario_options("replayed", dir);
    options.arguments.push_back("--lp_checkpoint_dir=" + dir.path + "/checkpoints");
    options.termination_notice = 10s;
    auto running = lp::launch<lp::test_multi_processing>(p, options);
    auto replay = running.client(p.find<lp::replay<Step>>("replay/0")).with_deadline(20s);
    for (long i = 0; i < 40; ++i)
      replay.insert("steps",
                    Step{i, lp::tensor<float>({2, 3}, std::vector<float>(6, float(i)))},
                    static_cast<double>(i));
    // Until a checkpoint holds all 40.
    auto file = dir.path + "/checkpoints/replay/0.ckpt";
    auto service = std::string(lp::service_definition<lp::replay<Step>>::name);
    REQUIRE(test_process::eventually(
        [&] {
          auto bytes = lp::detail::read_checkpoint(file, service);
          if (!bytes) return false;
          std::size_t at = 0;
          auto state = lp::detail::cbor::read_as<lp::detail::replay_state<Step>>(
              *bytes, at, lp::detail::protocol::max_depth);
          return state.tables.size() == 1 && state.tables[0].items.size() == 40;
        },
        20s));
    auto pids = running.pids();
    REQUIRE(pids.size() == 1);
    ::kill(pids[0], SIGKILL);
    REQUIRE(test_process::eventually(
        [&] {
          auto now = running.pids();
          return std::find(now.begin(), now.end(), pids[0]) == now.end();
        },
        30s));
    std::vector<lp::table_info> info;
    REQUIRE(test_process::eventually(
        [&] {
          try {
            info = replay.info();
            return true;
          } catch (const lp::transport_error&) {
            return false;
          }
        },
        30s));
    REQUIRE(info.size() == 1);
    CHECK(info[0].size == 40);
    CHECK(info[0].inserts == 40);
    auto oldest = replay.sample("steps", 1).front();
    CHECK(oldest.item.id == 0);
    CHECK(oldest.item.observation.shape() == std::vector<std::size_t>{2, 3});
    // Keys go on from where they were: a new item's key is new.
    auto key = replay.insert("steps", Step{40, lp::tensor<float>({1}, {40.0f})}, 1);
    CHECK(key > oldest.key);
    CHECK(key > 40);
    CHECK(running.stop());
  }
}
