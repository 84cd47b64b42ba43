#pragma once

// --lp_launch=kubernetes: on a workstation, write the launch's manifests;
// in one of its pods, be the coordinator or the process that the pod's
// Job and index name (docs/kubernetes.md).

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/kube/coordinator.hpp>
#include <launchpad/detail/kube/launcher.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/detail/kube/pod.hpp>
#include <launchpad/detail/kube/submit.hpp>
#include <launchpad/detail/process/node_process.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/periodic_worker.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/program.hpp>
#include <string>

namespace lp::detail::kube {

// Waits until the coordinator's rendezvous takes connections: the Job
// controller starts the pods in no order, and the coordinator's DNS name
// comes with its pod.
inline void wait_for_coordinator(const std::string& url) {
  auto where = address_of_url(url);
  if (!where)
    throw launch_error(std::string(child_env::rendezvous) + "='" + url +
                       "' is not a URL");
  constexpr auto patience = std::chrono::minutes(5);
  auto since = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    try {
      http_connection::open(where->host, where->port,
                            std::chrono::steady_clock::now() + std::chrono::seconds(2));
      return;
    } catch (const http_connection::failure& e) {
      auto waited = std::chrono::steady_clock::now() - since;
      if (waited > patience)
        throw launch_error("the coordinator at " + url +
                           " did not answer for 5 minutes (" + e.what() +
                           "); is its pod running?");
      if (attempt % 20 == 19)
        std::cerr << "[lp] waiting for the coordinator at " << url << " (" << e.what()
                  << ")" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// The coordinator is the launch: a node pod that cannot reach it for
// `patience` ends its program (as a stop signal from elsewhere does), rather
// than serve a launch that has ended without it.
inline void watch_coordinator(periodic_worker& watch, const address& coordinator,
                              std::chrono::seconds patience) {
  auto heard =
      std::make_shared<periodic_worker::clock::time_point>(periodic_worker::clock::now());
  watch.start([coordinator, patience, heard] {
    auto now = periodic_worker::clock::now();
    try {
      http_connection::open(coordinator.host, coordinator.port,
                            now + std::chrono::seconds(2));
      *heard = periodic_worker::clock::now();
    } catch (const http_connection::failure& e) {
      if (periodic_worker::clock::now() - *heard > patience) {
        std::cerr << "[lp] the coordinator at " << coordinator.host << ":"
                  << coordinator.port << " has not answered for " << patience.count()
                  << " s (" << e.what() << "): the launch has ended without it; stopping"
                  << std::endl;
        ::kill(::getpid(), SIGTERM);
        return now + std::chrono::hours(24);
      }
    }
    return now + std::chrono::seconds(2);
  });
}

inline int run_pod_node(const program& graph, transport_kind transport,
                        const launch_settings& settings) {
  node_site site;
  site.launcher_is_parent = false;
  site.bind_host = "0.0.0.0";
  site.report_end = true;
  site.checkpoints_in_run_dir = false;
  // Unset in a pod of manifests written before the sockets' volume: TCP only.
  if (const char* sockets = std::getenv(pod_env::socket_dir)) site.sockets_root = sockets;
  std::string rendezvous;
  try {
    auto unit = unit_of_pod(graph);
    std::string labels;
    for (const auto& label : unit.labels) labels += (labels.empty() ? "" : ",") + label;
    // A pod's host name is `<job>-<index>`; with the headless Service as its
    // subdomain, its DNS name is that and the Service's name.
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    site.advertise_host = std::string(host) + "." + pod_setting(pod_env::service);
    rendezvous = pod_setting(child_env::rendezvous);
    wait_for_coordinator(rendezvous);
    ::setenv(child_env::nodes, labels.c_str(), 1);
    ::setenv(child_env::policy, std::string(name_of(policy_kind::kubernetes)).c_str(), 1);
  } catch (const launch_error& e) {
    std::cerr << "[lp] this pod cannot start: " << e.what() << std::endl;
    return 1;
  }
  periodic_worker watch;
  watch_coordinator(watch, *address_of_url(rendezvous), coordinator_patience);
  return run_node_process(graph, transport, settings, site);
}

inline int run_coordinator(const program& graph, const launch_settings& settings) {
  try {
    auto run_dir = pod_setting(child_env::run_dir);
    return coordinator(graph, settings, run_dir, pod_setting(pod_env::service)).run();
  } catch (const std::exception& e) {
    std::cerr << "[lp] the coordinator cannot start: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace lp::detail::kube

namespace lp::detail {

// Writes the launch's manifests, or, in a pod, is what its role says.
LP_API int run_kubernetes(const program& graph, transport_kind transport,
                          const launch_settings& settings);

inline int launcher<kubernetes>::run(const program& graph, transport_kind transport,
                                     const launch_settings& settings) {
  return run_kubernetes(graph, transport, settings);
}

}  // namespace lp::detail
