// lp-launchpad: the launcher of a Launchpad program written in Python
// (python/launchpad/, docs/coming_from_launchpad.md). The program's front
// end (launchpad.launch) describes the program in a file of its launch's
// own 0700 directory and starts this executable with the file's path and
// the --lp_* flags; this reads the description, builds an lp::program of
// Python nodes that have no C++ declaration, and launches it as a C++
// program is launched: the same launch policies, the same hosting of Python
// nodes (detail/python/python_node.hpp), the same status page and restarts.
//
// The description is CBOR (protocol.toml's launchpad_description): the
// program's name, and per node its group, the name shown for it, whether it
// runs, the labels of the nodes it was given handles to, and its
// definition, cloudpickled, or, for a node of a C++ program built with the
// library (launchpad.CppNode), that program's executable, the label of its
// node and its arguments (the node's process is that program, in its
// node-process mode: detail/host/executable_node.hpp); per group with
// settings, its restarts, resources and environment. Each process of a
// launch reads it again, as each process of a
// C++ program builds its graph again; only a node's own process unpickles
// its definition.
//
// The launching script holds the other end of a socket pair
// (LP_LAUNCHPAD_CONTROL_FD): a `stop` line, or the socket's end (the script
// is gone, SIGKILL included), stops the program; the launcher then removes
// the description's directory, so nothing of the launch outlives it. Under
// test_mt and test_mp it launches with the test policies' controller and
// writes `ready <json>` (each node's URL, the launch's secret) once every
// node serves, for the test process to call them.
//
// Under --lp_launch=kubernetes the workstation's launcher writes the
// manifests: the description goes into the launch's Secret (its key
// launchpad_description.kube_key), and the pods' command line names no
// file of the workstation. Each pod's lp-launchpad reads the description
// from the Secret's mount, its run directory (LP_RUN_DIR).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <launchpad/detail/host/child_env.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/launchpad.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace key = lp::detail::protocol::launchpad_description;

// True in a pod of a Kubernetes launch (its manifests set the role).
bool in_kube_pod() {
  return std::getenv(lp::detail::kube::pod_env::role) != nullptr;
}

// The description's path: the one argument that is no --lp_ flag; in a
// Kubernetes pod, the Secret's copy in the run directory.
std::string description_path(int argc, char** argv) {
  if (in_kube_pod()) {
    const char* run_dir = std::getenv(lp::detail::child_env::run_dir);
    if (run_dir == nullptr)
      throw lp::launch_error(std::string("lp-launchpad in a Kubernetes pod finds its "
                                         "description in the launch's Secret, at $") +
                             lp::detail::child_env::run_dir +
                             ", which is not set: this pod was not made from the "
                             "manifests that --lp_launch=kubernetes writes");
    return (std::filesystem::path(run_dir) / key::kube_key).string();
  }
  std::string found;
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word.starts_with("-")) continue;
    if (!found.empty())
      throw lp::launch_error("lp-launchpad takes one description, not '" + found +
                             "' and '" + std::string(word) + "'");
    found = word;
  }
  if (found.empty())
    throw lp::launch_error(
        "usage: lp-launchpad DESCRIPTION [--lp_* flags]; launchpad.launch() writes the "
        "description and starts this (docs/coming_from_launchpad.md)");
  return found;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw lp::launch_error("lp-launchpad: cannot read the description " + path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

nlohmann::json parse_description(const std::string& bytes, const std::string& path) {
  try {
    return nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw lp::launch_error("lp-launchpad: the description " + path +
                           " is not CBOR: " + e.what());
  }
}

// The script's end of the socket pair, taken out of the environment so that
// the node processes this launcher starts see neither it nor its variable;
// -1 for a launcher started by hand, or a node process.
int take_control_socket() {
  const char* named = std::getenv(std::string(key::control_variable).c_str());
  if (named == nullptr) return -1;
  int fd = std::atoi(named);
  ::unsetenv(std::string(key::control_variable).c_str());
  if (fd < 0 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return -1;
  return fd;
}

// True once the script asked for a stop or is gone; false while it is
// silent for `wait_ms`. Reads at most one chunk: a line is a stop.
bool script_says_stop(int fd, int wait_ms) {
  pollfd polled{fd, POLLIN, 0};
  int ready = ::poll(&polled, 1, wait_ms);
  if (ready <= 0) return false;
  char chunk[256];
  ssize_t got = ::read(fd, chunk, sizeof chunk);
  if (got < 0 && errno == EINTR) return false;
  return true;  // `stop`, its end (0), or an error: no script to follow any longer
}

void tell_script(int fd, const std::string& line) {
  std::string rest = line + "\n";
  while (!rest.empty()) {
    ssize_t wrote = ::write(fd, rest.data(), rest.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return;  // the script is gone: the next poll sees it
    rest.erase(0, static_cast<std::size_t>(wrote));
  }
}

// local_mt and local_mp: the script's stop is the SIGTERM a user would send,
// which the launch's own handling takes as one request. The script started
// this launcher in a process group of its own, so that a Ctrl+C or a
// group's signal reaches it only this way, never twice.
std::atomic<bool> launch_over{false};

void follow_script(int fd) {
  std::thread([fd] {
    while (!script_says_stop(fd, 200))
      if (launch_over) return;
    if (!launch_over) ::kill(::getpid(), SIGTERM);
  }).detach();
}

// test_mt and test_mp: the controller's launch, which the script calls once
// every node serves, and stops.
template <class Policy, class Options>
int run_under_test(const lp::program& graph, const Options& options, std::size_t nodes,
                   int fd) {
  auto running = lp::launch<Policy>(graph, options);
  // test_mp's controller returns once the processes started; the script is
  // told once every node serves.
  while (running.urls().size() < nodes && !running.stop_requested())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!running.stop_requested()) {
    nlohmann::json ready = {{key::ready_urls, running.urls()},
                            {key::ready_secret, running.secret()}};
    tell_script(fd, std::string(key::control_ready) + ready.dump());
  }
  try {
    while (!running.wait_for(std::chrono::milliseconds(100)))
      if (script_says_stop(fd, 0)) break;
  } catch (const std::exception& e) {
    std::cerr << "[lp] " << e.what() << std::endl;
    return 1;
  }
  if (running.stop()) return 0;
  std::cerr << "[lp] " << running.summary() << std::endl;
  return 1;
}

// The value of `--lp_<name>=` among the flags, or `otherwise`.
std::string flag_value(int argc, char** argv, std::string_view name,
                       std::string otherwise) {
  std::string prefix = "--lp_" + std::string(name) + "=";
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with(prefix)) return argv[i] + prefix.size();
  return otherwise;
}

int launch(const lp::program& graph, std::size_t nodes, int argc, char** argv, int fd) {
  std::string policy = flag_value(argc, argv, "launch", "local_mt");
  if (fd >= 0 && policy == "test_mt") {
    lp::test_options options;
    options.python = flag_value(argc, argv, "python", options.python);
    return run_under_test<lp::test_multi_threading>(graph, options, nodes, fd);
  }
  if (fd >= 0 && policy == "test_mp") {
    lp::process_test_options options;
    options.executable = std::filesystem::read_symlink("/proc/self/exe").string();
    for (int i = 1; i < argc; ++i)
      if (!std::string_view(argv[i]).starts_with("--lp_launch="))
        options.arguments.push_back(argv[i]);
    return run_under_test<lp::test_multi_processing>(graph, options, nodes, fd);
  }
  if (fd >= 0) follow_script(fd);
  if (policy == "kubernetes" && !in_kube_pod()) {
    // The manifests: the pods' command line is this one's, less the
    // description's path, which means nothing in a pod.
    std::vector<char*> words;
    for (int i = 0; i < argc; ++i)
      if (i == 0 || std::string_view(argv[i]).starts_with("-")) words.push_back(argv[i]);
    words.push_back(nullptr);
    int status = lp::launch(graph, static_cast<int>(words.size() - 1), words.data());
    launch_over = true;
    return status;
  }
  int status = lp::launch(graph, argc, argv);
  launch_over = true;
  return status;
}

void add_nodes(lp::program& graph, const nlohmann::json& nodes) {
  for (const auto& node : nodes) {
    lp::node_info spec;
    spec.group = node.at(key::group).get<std::string>();
    spec.service = node.at(key::service).get<std::string>();
    spec.has_run = node.at(key::has_run).get<bool>();
    spec.edges = node.at(key::edges).get<std::vector<std::string>>();
    if (node.contains(key::executable)) {
      auto recipe = std::make_shared<lp::detail::executable_recipe>();
      recipe->path = node.at(key::executable).get<std::string>();
      recipe->node = node.at(key::executable_node).get<std::string>();
      recipe->arguments =
          node.at(key::executable_arguments).get<std::vector<std::string>>();
      lp::detail::graph_access::add_described(graph, std::move(spec), std::move(recipe));
      continue;
    }
    auto recipe = std::make_shared<lp::detail::python_recipe>();
    const auto& definition = node.at(key::definition).get_binary();
    recipe->definition.assign(definition.begin(), definition.end());
    lp::detail::graph_access::add_described(graph, std::move(spec), std::move(recipe));
  }
}

// The groups' settings (program.group(label) in the script, and
// local_resources' env): set as a C++ program sets them, so that every
// launch applies them as it does for one (docs/launching.md, "Restarts").
void apply_group_settings(lp::program& graph, const nlohmann::json& groups) {
  for (const auto& [label, wanted] : groups.items()) {
    auto group = graph.group(label);
    if (wanted.contains(key::max_restarts))
      group.restart_on_failure(
          wanted.at(key::max_restarts).get<int>(),
          std::chrono::milliseconds(wanted.at(key::restart_backoff_ms).get<long>()));
    if (wanted.contains(key::resources)) {
      const auto& needs = wanted.at(key::resources);
      group.resources({.cpus = needs.at(key::cpus).get<int>(),
                       .memory_mb = needs.at(key::memory_mb).get<long>(),
                       .gpus = needs.at(key::gpus).get<int>()});
    }
    if (wanted.contains(key::env))
      group.env(wanted.at(key::env).get<std::map<std::string, std::string>>());
  }
}

}  // namespace

// --lp_help lists the library's flags, as every launch's does, with no
// description to read: launchpad's front end asks it which flags take a
// value (python/launchpad/_flags.py), as absl needs to know. --lp_status
// reads a running launch's run directory, not a program: a Launchpad
// program's user asks it of lp-launchpad, whose path the script knows.
bool asks_no_program(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word == "--lp_help" || word.starts_with("--lp_status=")) return true;
  }
  return false;
}

int main(int argc, char** argv) {
  if (asks_no_program(argc, argv))
    return lp::launch(lp::program("lp-launchpad"), argc, argv);
  int fd = take_control_socket();
  int status = 1;
  std::string path;
  try {
    path = description_path(argc, argv);
    auto bytes = read_file(path);
    auto description = parse_description(bytes, path);
    lp::program graph(description.at(key::name).get<std::string>());
    add_nodes(graph, description.at(key::nodes));
    if (description.contains(key::groups))
      apply_group_settings(graph, description.at(key::groups));
    if (flag_value(argc, argv, "launch", "") == "kubernetes" && !in_kube_pod())
      lp::detail::graph_access::carry_file(graph, key::kube_key, std::move(bytes));
    status = launch(graph, description.at(key::nodes).size(), argc, argv, fd);
  } catch (const std::exception& e) {
    std::cerr << "[lp] the program could not start: " << e.what() << std::endl;
  }
  // The launcher the script started owns the description's directory (its
  // node processes read it until they end): it goes with the launch.
  auto directory = std::filesystem::path(path).parent_path();
  if (fd >= 0 && directory.filename().string().starts_with(key::launcher)) {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }
  return status;
}
