#pragma once

// Whether the launcher can still reach each node that serves beyond
// loopback. A host cut off from the network (a partition, a dead switch, a
// frozen machine) leaves its node processes running where nothing can call
// them, and nothing inside them can tell: the watchdog of a group's
// health_timeout (host/watchdog.hpp) sees a hung call or run(), not a
// network. So the launcher asks each such node GET /lp/v1/health, and a node
// that answers nothing for its group's health_timeout is lost. On loopback
// there is no network to lose: a node there is not asked.

#include <algorithm>
#include <chrono>
#include <functional>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/util/periodic_worker.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace lp::detail {

class reachability_watch {
 public:
  using clock = std::chrono::steady_clock;

  // A process to watch: `label`, one of its nodes, answers for it.
  struct target {
    std::string unit;
    std::string label;
    std::chrono::milliseconds timeout;  // its group's health_timeout
  };
  // Where a node serves now, and which start of its process that is (a
  // restarted process may serve where the last one did); nothing while it
  // does not serve.
  struct serving {
    address at;
    int start = 0;
    bool operator==(const serving&) const = default;
  };
  using lookup = std::function<std::optional<serving>(const std::string& label)>;
  // Called once per process that went silent, from the watch's own thread.
  using lost =
      std::function<void(const std::string& unit, std::chrono::milliseconds silence)>;

  // One thread per target, so that a silent node, whose every probe waits
  // out its deadline, delays no other's.
  reachability_watch(std::vector<target> targets, lookup where, lost report,
                     const tls_context* tls)
      : where_(std::move(where)), report_(std::move(report)), tls_(tls) {
    for (auto& t : targets) {
      auto& worker = workers_.emplace_back();
      worker.start([this, t = std::move(t), state = probe_state{}]() mutable {
        return round(t, state);
      });
    }
  }
  reachability_watch(const reachability_watch&) = delete;
  reachability_watch& operator=(const reachability_watch&) = delete;
  ~reachability_watch() {
    for (auto& worker : workers_) worker.request_stop();
    for (auto& worker : workers_) worker.stop();
  }

  // How often a node is asked, and how long each probe waits: a quarter of
  // its timeout each, so that a node is found lost at most half a timeout
  // late, and a short silence (under a timeout) is outlived.
  static std::chrono::milliseconds period_of(std::chrono::milliseconds timeout) {
    return std::clamp(timeout / 4, std::chrono::milliseconds(50),
                      std::chrono::milliseconds(1000));
  }

 private:
  struct probe_state {
    std::optional<serving> process;  // the one being watched
    clock::time_point heard;         // its last answer, or when it began to serve
    bool reported = false;
    std::unique_ptr<http_connection> connection;
  };

  clock::time_point round(const target& t, probe_state& state) {
    auto period = period_of(t.timeout);
    auto now = clock::now();
    auto process = where_(t.label);
    if (!process) {
      state = {};
      return now + period;
    }
    if (process != state.process) {  // a new process: its silence starts now
      state = {};
      state.process = process;
      state.heard = now;
    }
    if (state.reported) return now + period;
    if (answers(process->at, state, now + period)) {
      state.heard = clock::now();
    } else if (auto silence = clock::now() - state.heard; silence > t.timeout) {
      state.reported = true;
      report_(t.unit, std::chrono::duration_cast<std::chrono::milliseconds>(silence));
    }
    return now + period;
  }

  // Any HTTP answer will do: a node that says it stops is still reachable.
  // So is a refused connection, which its host sent: a process that no
  // longer listens is the reaper's business, not a partition.
  bool answers(const address& at, probe_state& state, clock::time_point deadline) {
    try {
      if (!state.connection || !state.connection->reusable())
        state.connection = http_connection::open(at.host, at.port, deadline, tls_);
      std::string body;
      state.connection->get(protocol::path::health, "", deadline, body, 4096);
      return true;
    } catch (const http_connection::failure& e) {
      state.connection.reset();
      return e.kind == http_connection::failure::refused;
    }
  }

  lookup where_;
  lost report_;
  const tls_context* tls_;
  std::list<periodic_worker> workers_;
};

}  // namespace lp::detail
