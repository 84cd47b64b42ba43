#pragma once

// The Kubernetes objects of one launch (docs/kubernetes.md, "The
// manifests"): its Secret, a headless Service that gives every pod a DNS
// name, a Service for the status page, the coordinator's Job, and one
// Indexed Job per process group.

#include <cstddef>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/detail/kube/yaml.hpp>
#include <launchpad/detail/lifecycle/launch_state.hpp>
#include <launchpad/detail/os/run_directory.hpp>
#include <launchpad/detail/process/units.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/tls/credentials.hpp>
#include <launchpad/program.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::kube {

// Everything the manifests hold beyond the graph.
struct manifest_plan {
  launch_names names;
  std::string kube_namespace = "default";
  std::string image;
  std::string binary;                  // the program's path in the image
  std::vector<std::string> arguments;  // the container's, after the binary
  std::string secret;                  // empty: --lp_insecure
  tls_credentials tls;                 // empty: no TLS
  int termination_notice_secs = 10;
};

// The files the manifests are written to by --lp_dry_run.
inline constexpr const char* manifest_file = "launch.yaml";
inline constexpr const char* kustomization_file = "kustomization.yaml";

// The most a Secret may hold (its data and stringData, keys included).
inline constexpr std::size_t max_secret_bytes = 1024 * 1024;

// Where the Secret's volume is called in each pod.
inline constexpr const char* secret_volume = "launchpad";
inline constexpr const char* sockets_volume = "local-calls";

namespace manifest_detail {

// The labels every object of the launch carries, by which `kubectl delete
// -l launchpad.dev/launch=<launch>` finds them all.
inline yaml_value labels(const program& graph, const manifest_plan& plan) {
  yaml_value labels = yaml_value::object();
  labels["app.kubernetes.io/name"] = "launchpad";
  labels["launchpad.dev/launch"] = plan.names.launch;
  labels["launchpad.dev/program"] = dns_label(graph.name(), 63);
  return labels;
}

inline yaml_value metadata(const std::string& name, const program& graph,
                           const manifest_plan& plan,
                           const yaml_value& extra_labels = {}) {
  auto all = labels(graph, plan);
  if (extra_labels.is_object()) all.update(extra_labels);
  yaml_value meta = yaml_value::object();
  meta["name"] = name;
  meta["namespace"] = plan.kube_namespace;
  meta["labels"] = all;
  return meta;
}

inline yaml_value env_entry(const std::string& name, const std::string& value) {
  yaml_value entry = yaml_value::object();
  entry["name"] = name;
  entry["value"] = value;
  return entry;
}

// The Secret, read-only, at the run directory's path: only its owner
// (root, or the fsGroup) may read the files.
inline yaml_value secret_volume_of(const manifest_plan& plan) {
  yaml_value volume = yaml_value::object();
  volume["name"] = secret_volume;
  volume["secret"] = {{"secretName", plan.names.secret()}, {"defaultMode", 0400}};
  return yaml_value::array({volume});
}

inline yaml_value secret_mount_of() {
  yaml_value mount = yaml_value::object();
  mount["name"] = secret_volume;
  mount["mountPath"] = secret_mount;
  mount["readOnly"] = true;
  return yaml_value::array({mount});
}

inline yaml_value container_port(const std::string& name, int number) {
  yaml_value port = yaml_value::object();
  port["name"] = name;
  port["containerPort"] = number;
  return port;
}

inline yaml_value command_of(const manifest_plan& plan) {
  yaml_value command = yaml_value::array({plan.binary});
  for (const auto& argument : plan.arguments) command.push_back(argument);
  return command;
}

// An Indexed Job's pod template; `container` is completed with the image,
// the command, the Secret's mount and the environment.
inline yaml_value pod_template(const yaml_value& pod_labels, const manifest_plan& plan,
                               yaml_value container, const yaml_value& env,
                               bool with_sockets = false) {
  yaml_value full = yaml_value::object();
  full["name"] = container["name"];
  full["image"] = plan.image;
  full["command"] = command_of(plan);
  full["env"] = env;
  for (const auto& [key, value] : container.items())
    if (key != "name") full[key] = value;
  full["volumeMounts"] = secret_mount_of();
  // A node pod's sockets, on a volume of the pod's own (names.hpp).
  if (with_sockets)
    full["volumeMounts"].push_back(
        {{"name", sockets_volume}, {"mountPath", sockets_mount}});
  yaml_value spec = yaml_value::object();
  // The pods' DNS names, <job>-<index>.<service>, exist through the
  // headless Service named here.
  spec["subdomain"] = plan.names.headless_service();
  spec["restartPolicy"] = "Never";  // a failed process is the Job's to replace, by index
  // A node stops in order within its notice, as under local_mp; the pod's
  // SIGKILL comes a little after it.
  spec["terminationGracePeriodSeconds"] = plan.termination_notice_secs + 5;
  spec["containers"] = yaml_value::array({full});
  spec["volumes"] = secret_volume_of(plan);
  if (with_sockets)
    spec["volumes"].push_back(
        {{"name", sockets_volume}, {"emptyDir", yaml_value::object()}});
  yaml_value pod = yaml_value::object();
  pod["metadata"] = {{"labels", pod_labels}};
  pod["spec"] = spec;
  return pod;
}

inline yaml_value resources_of(const lp::resources& needs) {
  yaml_value amounts = yaml_value::object();
  amounts["cpu"] = std::to_string(needs.cpus);
  if (needs.memory_mb > 0) amounts["memory"] = std::to_string(needs.memory_mb) + "Mi";
  yaml_value limits = amounts;
  // A GPU is an extended resource: asked as a limit, which is its request.
  if (needs.gpus > 0) limits["nvidia.com/gpu"] = std::to_string(needs.gpus);
  return {{"requests", amounts}, {"limits", limits}};
}

inline std::string group_label(const std::string& group) {
  return group.empty() ? std::string("nodes") : dns_label(group, 63);
}

// RFC 4648 base64, as a Secret's `data` holds bytes that are not text.
inline std::string base64_of(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::size_t left = bytes.size() - i;
    auto byte = [&](std::size_t k) {
      return k < left ? static_cast<unsigned char>(bytes[i + k]) : 0u;
    };
    unsigned long triple = (byte(0) << 16) | (byte(1) << 8) | byte(2);
    out += alphabet[(triple >> 18) & 63];
    out += alphabet[(triple >> 12) & 63];
    out += left > 1 ? alphabet[(triple >> 6) & 63] : '=';
    out += left > 2 ? alphabet[triple & 63] : '=';
  }
  return out;
}

}  // namespace manifest_detail

inline yaml_value secret_object(const program& graph, const manifest_plan& plan) {
  using namespace manifest_detail;
  // Exactly the run directory's files: a pod reads the mount as every node
  // process reads its run directory (run_directory::credentials_of).
  yaml_value data = yaml_value::object();
  if (!plan.secret.empty()) data[protocol::run_directory::secret] = plan.secret + "\n";
  if (!plan.tls.empty()) {
    data[run_directory::certificate_file] = plan.tls.certificate;
    data[run_directory::key_file] = plan.tls.key;
    if (plan.tls.authority != plan.tls.certificate)
      data[run_directory::authority_file] = plan.tls.authority;
  }
  yaml_value secret = yaml_value::object();
  secret["apiVersion"] = "v1";
  secret["kind"] = "Secret";
  secret["metadata"] = metadata(plan.names.secret(), graph, plan);
  secret["type"] = "Opaque";
  // The files the graph carries (graph_access::carry_file: a Launchpad
  // program's description), as bytes: they need not be text.
  const auto& carried = graph_access::carried_files(graph);
  std::size_t size = plan.secret.size() + plan.tls.certificate.size() +
                     plan.tls.key.size() + plan.tls.authority.size() + 64;  // and keys
  if (!carried.empty()) {
    yaml_value files = yaml_value::object();
    for (const auto& [name, bytes] : carried) {
      files[name] = base64_of(bytes);
      size += name.size() + bytes.size();
    }
    secret["data"] = files;
  }
  // The API server refuses a larger Secret, after the objects before it.
  if (size > max_secret_bytes)
    throw launch_error(
        "the launch's Secret would hold " + std::to_string(size) +
        " bytes, more than the " + std::to_string(max_secret_bytes) +
        " Kubernetes takes: the program's description carries its nodes' definitions, "
        "pickled with every value they were given; build large values in the nodes, or "
        "put them in the image, and pass their paths");
  secret["stringData"] = data;
  return secret;
}

inline yaml_value headless_service_object(const program& graph,
                                          const manifest_plan& plan) {
  using namespace manifest_detail;
  yaml_value spec = yaml_value::object();
  // No ports: a headless Service needs none, and its DNS records name the
  // pods, whatever they serve on.
  spec["clusterIP"] = "None";
  spec["selector"] = {{"launchpad.dev/launch", plan.names.launch}};
  // A node must resolve the coordinator before either is ready.
  spec["publishNotReadyAddresses"] = true;
  yaml_value service = yaml_value::object();
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"] = metadata(plan.names.headless_service(), graph, plan);
  service["spec"] = spec;
  return service;
}

inline yaml_value status_service_object(const program& graph, const manifest_plan& plan) {
  using namespace manifest_detail;
  yaml_value port = yaml_value::object();
  port["name"] = "status";
  port["protocol"] = "TCP";
  port["port"] = status_port;
  port["targetPort"] = status_port;
  yaml_value spec = yaml_value::object();
  spec["selector"] = {{"launchpad.dev/launch", plan.names.launch},
                      {"launchpad.dev/role", std::string(coordinator_role)}};
  spec["ports"] = yaml_value::array({port});
  yaml_value service = yaml_value::object();
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"] = metadata(plan.names.status_service(), graph, plan,
                                 {{"launchpad.dev/role", std::string(coordinator_role)}});
  service["spec"] = spec;
  return service;
}

inline yaml_value coordinator_job_object(const program& graph,
                                         const manifest_plan& plan) {
  using namespace manifest_detail;
  yaml_value role = {{"launchpad.dev/role", std::string(coordinator_role)}};
  auto pod_labels = labels(graph, plan);
  pod_labels.update(role);
  yaml_value env = yaml_value::array();
  env.push_back(env_entry(pod_env::role, std::string(coordinator_role)));
  env.push_back(env_entry(pod_env::service, plan.names.headless_service()));
  env.push_back(env_entry(child_env::run_dir, secret_mount));
  env.push_back(
      env_entry(child_env::policy, std::string(name_of(policy_kind::kubernetes))));
  yaml_value container = yaml_value::object();
  container["name"] = "coordinator";
  container["ports"] = yaml_value::array({container_port("rendezvous", rendezvous_port),
                                          container_port("status", status_port)});
  // It serves the rendezvous and the status page, and runs no node: a
  // little of a host, and no GPU.
  container["resources"] = {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}};
  yaml_value spec = yaml_value::object();
  // Indexed, for its pod's host name: <job>-0, the rendezvous the nodes
  // know before it exists (launch_names::rendezvous_url).
  spec["completionMode"] = "Indexed";
  spec["completions"] = 1;
  spec["parallelism"] = 1;
  // A new coordinator would know nothing of the running nodes: the launch
  // ends with it.
  spec["backoffLimit"] = 0;
  spec["template"] = pod_template(pod_labels, plan, container, env);
  yaml_value job = yaml_value::object();
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  job["metadata"] = metadata(plan.names.coordinator_job(), graph, plan, role);
  job["spec"] = spec;
  return job;
}

// The Job of the i-th process group (groups_of): one index per process of
// it (units_of).
inline yaml_value group_job_object(const program& graph, const manifest_plan& plan,
                                   std::size_t i) {
  using namespace manifest_detail;
  auto group = groups_of(graph).at(i);
  auto settings = graph.settings_of(group);
  auto count = static_cast<int>(units_of(graph, group).size());
  yaml_value extra = {{"launchpad.dev/group", group_label(group)},
                      {"launchpad.dev/role", std::string(node_role)}};
  auto pod_labels = labels(graph, plan);
  pod_labels.update(extra);
  yaml_value env = yaml_value::array();
  env.push_back(env_entry(pod_env::role, std::string(node_role)));
  env.push_back(env_entry(pod_env::group, group));
  env.push_back(env_entry(pod_env::service, plan.names.headless_service()));
  env.push_back(
      env_entry(child_env::rendezvous, plan.names.rendezvous_url(!plan.tls.empty())));
  env.push_back(env_entry(child_env::run_dir, secret_mount));
  env.push_back(
      env_entry(child_env::policy, std::string(name_of(policy_kind::kubernetes))));
  env.push_back(env_entry(pod_env::socket_dir, sockets_mount));
  for (const auto& [name, value] : settings.env) env.push_back(env_entry(name, value));
  yaml_value container = yaml_value::object();
  container["name"] = "node";
  container["resources"] = resources_of(settings.resources);
  // An eviction, a preemption or a node drained is no failure of the
  // program's: the pod comes back at its index, with no restart spent.
  yaml_value ignore_disruptions = yaml_value::object();
  ignore_disruptions["action"] = "Ignore";
  ignore_disruptions["onPodConditions"] =
      yaml_value::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  yaml_value spec = yaml_value::object();
  spec["completionMode"] = "Indexed";
  spec["completions"] = count;
  spec["parallelism"] = count;
  // A node's restarts, each index counted apart: one node spending its
  // restarts leaves the others theirs, as under local_mp. What the program
  // does when one has no restarts left, the coordinator decides.
  spec["backoffLimitPerIndex"] = settings.max_restarts;
  // A node that cannot start for a reason a restart would not mend (a
  // Python class its image cannot have) spends no restarts.
  yaml_value unrecoverable = yaml_value::object();
  unrecoverable["action"] = "FailIndex";
  unrecoverable["onExitCodes"] = {
      {"containerName", "node"},
      {"operator", "In"},
      {"values", yaml_value::array({unrecoverable_exit_status})}};
  spec["podFailurePolicy"] = {
      {"rules", yaml_value::array({ignore_disruptions, unrecoverable})}};
  spec["template"] = pod_template(pod_labels, plan, container, env, true);
  yaml_value job = yaml_value::object();
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  job["metadata"] = metadata(plan.names.job_of(graph, i), graph, plan, extra);
  job["spec"] = spec;
  return job;
}

// Every object of the launch, in the order kubectl should create them: the
// Secret and the Services before the pods that need them.
inline std::vector<yaml_value> launch_objects(const program& graph,
                                              const manifest_plan& plan) {
  std::vector<yaml_value> objects{
      secret_object(graph, plan), headless_service_object(graph, plan),
      status_service_object(graph, plan), coordinator_job_object(graph, plan)};
  auto groups = groups_of(graph);
  for (std::size_t i = 0; i < groups.size(); ++i)
    objects.push_back(group_job_object(graph, plan, i));
  return objects;
}

// The launch as one multi-document YAML, for kubectl apply -f.
inline std::string launch_yaml(const program& graph, const manifest_plan& plan) {
  return to_yaml(launch_objects(graph, plan));
}

// What kubectl apply -k reads in the launch's directory.
inline std::string kustomization_yaml() {
  yaml_value kustomization = yaml_value::object();
  kustomization["apiVersion"] = "kustomize.config.k8s.io/v1beta1";
  kustomization["kind"] = "Kustomization";
  kustomization["resources"] = yaml_value::array({manifest_file});
  return to_yaml(kustomization);
}

}  // namespace lp::detail::kube
