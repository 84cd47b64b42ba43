#pragma once
// Two processes of one host that move 64 MB arrays through shared memory,
// for the tests that kill one of them mid-transfer (tests/unit-processes.cpp):
// a node hosted with its unix socket in a directory, and a caller that
// calls it there. tests/processes/program.cpp runs either as a process of
// its own; the test hosts the other side itself.
#include <sys/stat.h>

#include <dirent.h>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <launchpad/detail/call/http_channel.hpp>
#include <launchpad/detail/host/node_host.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "scenarios.hpp"

namespace bulk_peers {

inline constexpr const char* secret = "0123456789abcdef0123456789abcdef";
// 64 MB of float32.
inline constexpr std::size_t floats = std::size_t{16} << 20;

// Answers with what it was sent, after holding it for `ms` (in place, in
// the caller's segment); leaves <markers>/holding while it holds.
struct Holder {
  std::string markers;
  lp::tensor<float> hold(lp::tensor<float> values, int ms) {
    if (ms > 0) {
      scenarios::touch(markers + "/holding");
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    return values;
  }
};

}  // namespace bulk_peers
LP_SERVICE(bulk_peers::Holder, hold);

namespace bulk_peers {

// The node "holder", hosted in this process with its socket in `dir`, and
// this process's shared memory capped at `cap` bytes.
struct hosted {
  hosted(const std::string& dir, const std::string& markers,
         std::size_t cap = std::size_t{256} << 20)
      : graph("bulk") {
    graph.add_node<Holder>("holder", markers);
    lp::detail::host_options options;
    options.policy = lp::detail::policy_kind::test_mt;
    options.secret = secret;
    options.socket_dir = dir;
    options.stop_when_runs_finish = false;
    options.shared_memory_bytes = cap;
    host = std::make_unique<lp::detail::node_host>(graph, std::move(options));
    auto url = host->urls().at("holder");
    where = {"127.0.0.1", std::stoi(url.substr(url.rfind(':') + 1)),
             dir + "/" + lp::detail::socket_file_name("holder"),
             lp::detail::host_identity()};
  }
  lp::program graph;
  std::unique_ptr<lp::detail::node_host> host;
  lp::detail::address where;
};

// Where a node serves, as a file: host, port, socket, host identity.
inline void write_address(const std::string& path, const lp::detail::address& where) {
  scenarios::touch(path, where.host + " " + std::to_string(where.port) + " " +
                             where.socket + " " + where.host_id);
}
inline lp::detail::address read_address(const std::string& path) {
  lp::detail::address where;
  std::ifstream(path) >> where.host >> where.port >> where.socket >> where.host_id;
  return where;
}

inline lp::client<Holder> client_of(const lp::detail::address& where) {
  auto directory = std::make_shared<lp::detail::local_directory>();
  directory->publish("holder", where);
  return lp::detail::client_access::make<Holder>(
      std::make_shared<lp::detail::http_channel>(
          "holder", directory, lp::detail::http_channel::options{secret, nullptr}));
}

inline lp::tensor<float> payload() {
  return lp::tensor<float>({floats}, std::vector<float>(floats, 0.5f));
}

// The node, with its socket in `dir`, until it is killed (at most 300 s);
// its address in <markers>/address once it serves.
inline int serve(const std::string& dir, const std::string& markers) {
  hosted node(dir, markers);
  write_address(markers + "/address", node.where);
  std::this_thread::sleep_for(std::chrono::seconds(300));
  return 1;
}

// Calls the node whose address is in <markers>/address with 64 MB arrays,
// each held `ms`, until it is killed (at most 1,000 calls); leaves
// <markers>/called.<n> after the n-th call.
inline int call(const std::string& markers, int ms) {
  auto holder = client_of(read_address(markers + "/address"));
  auto values = payload();
  for (int n = 1; n <= 1000; ++n) {
    if (holder.hold(values, ms).size() != values.size()) return 2;
    scenarios::touch(markers + "/called." + std::to_string(n));
  }
  return 1;
}

}  // namespace bulk_peers
