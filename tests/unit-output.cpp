// The lines local_mt's nodes write to std::cout, std::cerr and std::clog:
// whole, behind "[label] ", kept for the status page, with many node threads
// writing at once (docs/observability.md). Run under TSan by .ci/run.
#include <algorithm>
#include <launchpad/detail/os/node_streams.hpp>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "services.hpp"

namespace {

using lp::detail::launch_state;
using lp::detail::node_identity;
using lp::detail::node_scope;
using lp::detail::node_streams;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

node_identity identity(std::string label, std::string policy) {
  node_identity node;
  node.label = std::move(label);
  node.launch = std::move(policy);
  return node;
}

}  // namespace

TEST_SUITE("output") {
  TEST_CASE("node threads writing at once: whole lines behind their labels, last kept") {
    constexpr int nodes = 8, lines = 200;
    std::stringbuf out_sink, err_sink;
    std::ostream out(&out_sink), err(&err_sink);
    launch_state launch("p", "local_mt");
    std::vector<node_identity> identities;
    for (int i = 0; i < nodes; ++i)
      identities.push_back(identity("n/" + std::to_string(i), "local_mt"));
    auto stranger = identity("other", "test_mt");  // a node of another launch policy
    std::vector<std::string> kept;
    {
      node_streams streams("local_mt", {&out, &err});
      std::vector<std::thread> threads;
      for (const auto& node : identities)
        threads.emplace_back([&] {
          node_scope scope(node, launch);
          for (int j = 0; j < lines; ++j) {
            // In pieces (sputn, then sputc), as formatted output writes.
            out << "line " << j << " of " << node.label << '\n';
            err << "e" << j << std::endl;
          }
          out << "unfinished";
        });
      for (auto& thread : threads) thread.join();
      {
        node_scope scope(stranger, launch);
        out << "not ours\n";
      }
      out << "the launcher's own\n";
      kept = streams.last_lines("n/3");
      CHECK(streams.last_lines("other").empty());
    }
    CHECK(out.rdbuf() == &out_sink);
    CHECK(err.rdbuf() == &err_sink);
    REQUIRE(kept.size() == lp::detail::labelled_lines::kept);
    CHECK(kept.front() == "line 190 of n/3");
    CHECK(kept.back() == "e199");

    auto written = lines_of(out_sink.str());
    CHECK(written.size() == nodes * (lines + 1) + 2);
    std::map<std::string, int> next;  // each node's lines come in its order
    for (const auto& line : written) {
      if (line == "not ours" || line == "the launcher's own") continue;
      auto close = line.find("] ");
      REQUIRE_MESSAGE(line.starts_with("[n/"), line);
      REQUIRE_MESSAGE(close != std::string::npos, line);
      auto label = line.substr(1, close - 1);
      auto text = line.substr(close + 2);
      int& j = next[label];
      if (j == lines) {  // ended when the streams were given back
        CHECK_MESSAGE(text == "unfinished", line);
        continue;
      }
      CHECK_MESSAGE(text == "line " + std::to_string(j) + " of " + label, line);
      ++j;
    }
    CHECK(next.size() == nodes);
    CHECK(out_sink.str().find("not ours\nthe launcher's own\n") != std::string::npos);
    auto errors = lines_of(err_sink.str());
    CHECK(errors.size() == nodes * lines);
    CHECK(std::count(errors.begin(), errors.end(), "[n/5] e17") == 1);
  }

  TEST_CASE("a node's line written through another node's call stays its own") {
    // A direct call runs the callee's handler on the caller's thread, inside
    // the caller's unfinished line.
    std::stringbuf sink;
    std::ostream out(&sink);
    launch_state launch("p", "local_mt");
    auto caller = identity("caller", "local_mt"), callee = identity("callee", "local_mt");
    {
      node_streams streams("local_mt", {&out});
      node_scope outer(caller, launch);
      out << "calling... ";
      {
        node_scope inner(callee, launch);
        out << "called\n";
      }
      out << "done\n";
    }
    CHECK(sink.str() == "[callee] called\n[caller] calling... done\n");
  }
}
