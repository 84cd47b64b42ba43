#pragma once

// The launcher's status page (docs/observability.md): one HTTP server on
// loopback that serves the page itself, open to all (it holds no figure),
// and GET /lp/v1/status, the program's state as JSON, to those who send the
// launch's secret. A thread reads every node's GET /lp/v1/metrics once a
// second and keeps the last minutes of them, so that the page can show
// rates and plot them from the moment it opens.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <iostream>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/observe/call_metrics.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/os/signals.hpp>
#include <launchpad/detail/serve/listener.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/status/status_page.hpp>
#include <launchpad/detail/util/periodic_worker.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/program.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// A node as its launcher sees it, whatever its figures say.
enum class node_state { starting, serving, restarting, stopped, failed, unreachable };

// The state's name in the status JSON, on the page and in --lp_status.
inline std::string_view to_string(node_state state) {
  switch (state) {
    case node_state::starting:
      return "starting";
    case node_state::serving:
      return "serving";
    case node_state::restarting:
      return "restarting";
    case node_state::stopped:
      return "stopped";
    case node_state::failed:
      return "failed";
    case node_state::unreachable:
      return "unreachable";
  }
  return "unknown";
}

// What the launcher knows of a node, whatever its figures say.
struct node_status {
  std::string label;
  node_state state = node_state::starting;
  std::string url;  // empty until it serves
  long pid = 0;
  int restarts = 0;
  std::string failure;  // how it failed, for a failed node
  std::vector<std::string> last_lines;
};

namespace status {
struct node_link;
}  // namespace status

class status_server {
 public:
  using source = std::function<std::vector<node_status>()>;

  // `policy`: the launch's, whose name the page shows. `tls`: the
  // launch's, with which the poller reads its nodes; the page itself stays
  // plain HTTP on loopback.
  LP_API status_server(const program& graph, policy_kind policy, std::string secret,
                       source nodes, std::shared_ptr<const tls_context> tls = nullptr);
  status_server(const status_server&) = delete;
  status_server& operator=(const status_server&) = delete;
  LP_API ~status_server();

  // Serves on host:port (0: any free port) and returns the page's URL,
  // which tells nothing of the secret.
  LP_API std::string start(const std::string& host, int port);

  // The status JSON, as GET /lp/v1/status answers it.
  LP_API std::string status_json();

 private:
  struct sample {
    double time = 0;
    nlohmann::json figures;  // the node's GET /lp/v1/metrics JSON
    std::string url;         // where the node answered
    std::string process;     // which process answered: its url and pid
  };
  struct history {
    std::deque<sample> samples;  // oldest first, at most kept_samples
    double since = 0;            // when the last sample's process first answered
  };
  static constexpr std::size_t kept_samples = 600;  // ten minutes, one a second

  void poll(std::map<std::string, status::node_link>& links, std::string& body);
  nlohmann::json node_json(const node_status& node, const history* seen) const;

  const program& graph_;
  const std::string policy_, secret_;
  source nodes_;
  const std::shared_ptr<const tls_context> tls_;
  listener listener_;
  std::mutex mutex_;
  std::map<std::string, history> histories_;  // by label
  periodic_worker poller_;
};

// The file in a run directory that names the launch's status page, for
// --lp_status=RUN_DIR.
inline constexpr const char* status_file = "status";

// Starts the status page of a launch on the port of --lp_status_port,
// writes its URL into the run directory and prints it; null if off.
LP_API std::unique_ptr<status_server> start_status_page(
    const program& graph, policy_kind policy, const std::string& secret,
    const std::string& run_dir, port_or_off port, status_server::source nodes,
    std::shared_ptr<const tls_context> tls = nullptr);

// Keeps the page up `seconds` after the program ended, for a look at how it
// ended; Ctrl+C or SIGTERM ends the wait.
LP_API void linger(const status_server* page, int seconds);

}  // namespace lp::detail
