#pragma once

// --lp_launch=kubernetes outside a pod: the command a user runs on a
// workstation writes the launch's manifests, for kubectl to apply
// (docs/kubernetes.md). It talks to no cluster itself: kubectl already
// holds the user's credentials and context, and a launch is then whatever
// kubectl apply says it is.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/kube/manifests.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/detail/os/launch_tls.hpp>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/error.hpp>
#include <launchpad/program.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// Writes the manifests of a launch of `graph`: with --lp_dry_run to a
// directory of their own under --lp_kube_dir, for kubectl apply -k; else
// to stdout, for kubectl apply -f -. Returns the exit status; throws
// usage_error for flags that cannot make a launch (no --lp_kube_image).
LP_API int run_kube_manifests(const program& graph, const launch_settings& settings);

namespace kube {

// lp-<program>-<5 random letters or digits>: a DNS label of at most 29
// characters (launch_names), new for every launch, as two launches of one
// program may share a namespace.
inline std::string new_launch_name(const std::string& program) {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[5];
  random_bytes(bytes, sizeof bytes);
  std::string name = "lp-" + dns_label(program, 20) + "-";
  for (unsigned char byte : bytes) name += alphabet[byte % 36];  // a bias no one can use
  return name;
}

// The command line of the pods, after the binary: written from the
// workstation's settings as for any process a launch starts (so without
// --lp_dry_run, --lp_kube_dir or a site's TLS files, which are not in the
// image: the pods read TLS credentials from the Secret), with
// --lp_launch=kubernetes also where main() chose the policy.
inline std::vector<std::string> container_arguments(launch_settings settings) {
  settings.launch = policy_kind::kubernetes;
  return child_arguments(settings);
}

// Where the binary is in the image: --lp_kube_binary, else /usr/local/bin/
// and the name this one was started by.
inline std::string binary_in_image(const launch_settings& settings) {
  if (!settings.kube.binary.empty()) return settings.kube.binary;
  std::string name =
      settings.command.empty()
          ? ""
          : std::filesystem::path(settings.command.front()).filename().string();
  if (name.empty())
    throw usage_error(
        "cannot tell the binary's name in the image from argv[0]; give "
        "--lp_kube_binary=<its path in the image>, e.g. "
        "--lp_kube_binary=/usr/local/bin/prog");
  return "/usr/local/bin/" + name;
}

// How to watch and end a launch, once kubectl applied it.
inline void tell_how_to_follow(const manifest_plan& plan, std::ostream& out) {
  auto ns =
      plan.kube_namespace == "default" ? std::string() : " -n " + plan.kube_namespace;
  out << "[lp] once applied: follow it with kubectl" << ns << " logs -f job/"
      << plan.names.coordinator_job() << "; its status page with kubectl" << ns
      << " port-forward service/" << plan.names.status_service() << " " << status_port
      << "; remove it with kubectl" << ns
      << " delete jobs,services,secrets -l launchpad.dev/launch=" << plan.names.launch
      << std::endl;
}

// run_kube_manifests, writing to `out` and `err`; the launch is named
// `launch` (empty: a new name).
inline int write_kube_launch(const program& graph, const launch_settings& settings,
                             std::ostream& out, std::ostream& err,
                             std::string launch = {}) {
  const auto& cluster = settings.kube;
  if (cluster.image.empty())
    throw usage_error(
        "--lp_launch=kubernetes needs the image its pods run: add "
        "--lp_kube_image=<image>, e.g. "
        "--lp_kube_image=registry.example.com/team/prog:1.0 (docs/kubernetes.md, "
        "\"Building an image\")");
  graph_access::check_defined(graph);
  manifest_plan plan;
  plan.names.launch = launch.empty() ? new_launch_name(graph.name()) : std::move(launch);
  plan.kube_namespace = cluster.kube_namespace;
  plan.image = cluster.image;
  plan.binary = binary_in_image(settings);
  plan.arguments = container_arguments(settings);
  plan.termination_notice_secs = settings.process.termination_notice_secs;
  if (settings.process.insecure)
    err << "[lp] --lp_insecure: the nodes accept calls from anyone who can reach them"
        << std::endl;
  plan.secret = settings.process.insecure ? "" : make_secret();
  // The pods serve on the cluster's network: TLS unless --lp_tls=off.
  plan.tls = launch_tls(settings.tls, graph.name(), true);
  auto manifests = launch_yaml(graph, plan);
  if (!settings.dry_run) {
    err << "[lp] the manifests of launch " << plan.names.launch
        << " are on stdout, for kubectl apply -f -; they hold the launch's secret and "
           "TLS "
           "key: keep them from files others can read"
        << std::endl;
    out << manifests << std::flush;
    tell_how_to_follow(plan, err);
    return 0;
  }
  namespace fs = std::filesystem;
  auto parent = fs::absolute(cluster.dir);
  fs::create_directories(parent);
  auto dir = (parent / plan.names.launch).string();
  // Only its owner may read the directory: the Secret's manifest is in it.
  if (::mkdir(dir.c_str(), 0700) != 0)
    throw launch_error("cannot make the directory " + dir + ": " + std::strerror(errno) +
                       "; choose another --lp_kube_dir");
  write_private_file(dir + "/" + manifest_file, manifests);
  write_private_file(dir + "/" + kustomization_file, kustomization_yaml());
  out << "[lp] --lp_dry_run: the manifests of launch " << plan.names.launch << " are in "
      << dir << "/" << manifest_file
      << " (its Secret holds the launch's secret and TLS key; the "
      << "directory is yours alone). Start the launch with:\n"
      << "kubectl apply -k " << dir << std::endl;
  tell_how_to_follow(plan, err);
  return 0;
}

}  // namespace kube

}  // namespace lp::detail
