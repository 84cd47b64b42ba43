// The manifests of --lp_launch=kubernetes (docs/kubernetes.md): the YAML
// they are written in, what each object holds, and where --lp_dry_run
// puts them. tests/kube/validate_examples.py checks them against the
// Kubernetes API's schemas.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/kube/manifests.hpp>
#include <launchpad/detail/kube/names.hpp>
#include <launchpad/detail/kube/pod.hpp>
#include <launchpad/detail/kube/submit.hpp>
#include <launchpad/detail/kube/yaml.hpp>
#include <launchpad/detail/launchers.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/slurm.hpp>
#include <set>
#include <sstream>

#include "command.hpp"
#include "services.hpp"

namespace {

using lp::detail::kube::yaml_value;

lp::detail::launch_settings parsed(std::vector<std::string> words) {
  words.insert(words.begin(), "/home/me/build/two");
  return lp::detail::read_command_line(std::move(words), {.tls_together = false});
}

// write_kube_launch with the settings of `line`.
int write_launch(const lp::program& p, const lp::detail::launch_settings& line,
                 std::ostream& out, std::ostream& err, std::string launch = {}) {
  return lp::detail::kube::write_kube_launch(p, line, out, err, std::move(launch));
}

// The program of the golden file: a colocated group of two nodes with
// resources and an environment, and a group of two nodes that restart.
void add_two_groups(lp::program& p) {
  auto actors =
      p.group("actors").colocate().resources({.cpus = 2, .memory_mb = 4096, .gpus = 1});
  actors.env({{"OMP_NUM_THREADS", "2"}, {"NOTE", "a \"quoted\"\nline"}});
  actors.add_node<t::Counter>();
  actors.add_node<t::Counter>();
  auto learners = p.group("learners").restart_on_failure(3);
  learners.add_node<t::Counter>();
  learners.add_node<t::Counter>();
}

lp::detail::kube::manifest_plan fixed_plan() {
  lp::detail::kube::manifest_plan plan;
  plan.names.launch = "lp-two-groups-ab1cd";
  plan.kube_namespace = "research";
  plan.image = "registry.invalid/two:1";
  plan.binary = "/usr/local/bin/two";
  plan.arguments = {"--lp_launch=kubernetes", "--lp_kube_image=registry.invalid/two:1",
                    "--steps=5"};
  plan.secret = "00112233445566778899aabbccddeeff";
  plan.tls = {
      "-----BEGIN CERTIFICATE-----\nFAKE CERTIFICATE\n-----END CERTIFICATE-----\n",
      "-----BEGIN PRIVATE KEY-----\nFAKE KEY\n-----END PRIVATE KEY-----\n",
      "-----BEGIN CERTIFICATE-----\nFAKE CERTIFICATE\n-----END CERTIFICATE-----\n"};
  plan.termination_notice_secs = 10;
  return plan;
}

std::string golden_path() {
  if (const char* path = std::getenv("LP_KUBE_GOLDEN")) return path;
  auto beside =
      std::filesystem::path(__FILE__).parent_path() / "kube" / "two_groups.yaml";
  if (std::filesystem::exists(beside)) return beside.string();
  return "tests/kube/two_groups.yaml";  // from the repository's root
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

unsigned mode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// The object of `kind` named `name`.
const yaml_value& object_named(const std::vector<yaml_value>& objects,
                               const std::string& kind, const std::string& name) {
  for (const auto& object : objects)
    if (object["kind"] == kind && object["metadata"]["name"] == name) return object;
  FAIL_CHECK("no " << kind << " " << name);
  static const yaml_value none;
  return none;
}

// The value of a container's environment variable; "(unset)" without it.
std::string env_of(const yaml_value& job, const std::string& name) {
  for (const auto& entry :
       job["spec"]["template"]["spec"]["containers"][0]["env"].elements())
    if (entry["name"] == name) return entry["value"].scalar().get<std::string>();
  return "(unset)";
}

}  // namespace

TEST_SUITE("kube") {
  TEST_CASE(
      "the YAML: strings always quoted with JSON's escapes, keys in the order added") {
    using lp::detail::kube::to_yaml;
    yaml_value v = yaml_value::object();
    v["kind"] = "Job";
    v["on"] = "yes";  // YAML 1.1 reads a plain on as true
    v["mode"] = 0400;
    v["text"] = "a: b\n\"c\"\t#d";
    v["flag"] = true;
    v["nothing"] = nullptr;
    v["empty"] = yaml_value::object();
    v["none"] = yaml_value::array();
    v["app.kubernetes.io/name"] = "x";
    v["list"] =
        yaml_value::array({1, "2", yaml_value::array({"a", "b"}),
                           yaml_value({{"k", "v"}, {"m", yaml_value::array({"n"})}})});
    CHECK(to_yaml(v) ==
          "kind: \"Job\"\n"
          "\"on\": \"yes\"\n"
          "mode: 256\n"
          "text: \"a: b\\n\\\"c\\\"\\t#d\"\n"
          "flag: true\n"
          "nothing: null\n"
          "empty: {}\n"
          "none: []\n"
          "app.kubernetes.io/name: \"x\"\n"
          "list:\n"
          "  - 1\n"
          "  - \"2\"\n"
          "  - - \"a\"\n"
          "    - \"b\"\n"
          "  - k: \"v\"\n"
          "    m:\n"
          "      - \"n\"\n");
    CHECK(to_yaml(std::vector<yaml_value>{
              yaml_value({{"a", 1}}), yaml_value({{"b", 2}})}) == "a: 1\n---\nb: 2\n");
    CHECK(to_yaml(yaml_value("\x01")) == "\"\\u0001\"\n");
  }

  TEST_CASE("golden: the manifests of a program of two groups, word for word") {
    lp::program p("Two_Groups");
    add_two_groups(p);
    auto yaml = lp::detail::kube::launch_yaml(p, fixed_plan());
    auto path = golden_path();
    if (std::getenv("LP_KUBE_GOLDEN_UPDATE")) {
      std::ofstream(path, std::ios::binary) << yaml;
      MESSAGE("wrote " << path);
    }
    INFO("regenerate with LP_KUBE_GOLDEN_UPDATE=1 if the change is meant; golden file "
         << path);
    CHECK(yaml == read_all(path));
  }

  TEST_CASE(
      "the objects: a Secret, two Services, the coordinator, a Job per group, in order") {
    lp::program p("Two_Groups");
    add_two_groups(p);
    auto plan = fixed_plan();
    auto objects = lp::detail::kube::launch_objects(p, plan);
    std::vector<std::string> names;
    for (const auto& object : objects)
      names.push_back(object["kind"].scalar().get<std::string>() + " " +
                      object["metadata"]["name"].scalar().get<std::string>());
    CHECK(names ==
          std::vector<std::string>{
              "Secret lp-two-groups-ab1cd-secret", "Service lp-two-groups-ab1cd",
              "Service lp-two-groups-ab1cd-status", "Job lp-two-groups-ab1cd-coordinator",
              "Job lp-two-groups-ab1cd-actors", "Job lp-two-groups-ab1cd-learners"});
    for (const auto& object : objects) {
      CHECK(object["metadata"]["namespace"] == "research");
      CHECK(object["metadata"]["labels"]["app.kubernetes.io/name"] == "launchpad");
      CHECK(object["metadata"]["labels"]["launchpad.dev/launch"] ==
            "lp-two-groups-ab1cd");
      CHECK(object["metadata"]["labels"]["launchpad.dev/program"] == "two-groups");
    }
    auto headless = objects[1]["spec"];
    CHECK(headless["clusterIP"] == "None");
    CHECK(headless["publishNotReadyAddresses"] == true);
    CHECK_FALSE(headless.contains("ports"));
    auto status = objects[2]["spec"];
    CHECK(status["selector"]["launchpad.dev/role"] == "coordinator");
    CHECK(status["ports"][0]["port"] == lp::detail::kube::status_port);
  }

  TEST_CASE(
      "restarts and resources: max_restarts per index, disruptions ignored, "
      "cpu/memory/GPUs") {
    lp::program p("Two_Groups");
    add_two_groups(p);
    auto objects = lp::detail::kube::launch_objects(p, fixed_plan());
    const auto& actors = object_named(objects, "Job", "lp-two-groups-ab1cd-actors");
    const auto& learners = object_named(objects, "Job", "lp-two-groups-ab1cd-learners");
    const auto& coordinator =
        object_named(objects, "Job", "lp-two-groups-ab1cd-coordinator");
    // A colocated group is one process: one index.
    CHECK(actors["spec"]["completions"] == 1);
    CHECK(actors["spec"]["parallelism"] == 1);
    CHECK(actors["spec"]["backoffLimitPerIndex"] == 0);
    CHECK(learners["spec"]["completions"] == 2);
    CHECK(learners["spec"]["parallelism"] == 2);
    CHECK(learners["spec"]["completionMode"] == "Indexed");
    CHECK(learners["spec"]["backoffLimitPerIndex"] == 3);
    CHECK_FALSE(learners["spec"].contains("backoffLimit"));
    auto rule = learners["spec"]["podFailurePolicy"]["rules"][0];
    CHECK(rule["action"] == "Ignore");
    CHECK(rule["onPodConditions"][0]["type"] == "DisruptionTarget");
    CHECK(coordinator["spec"]["backoffLimit"] == 0);
    CHECK(coordinator["spec"]["completions"] == 1);

    auto resources = actors["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(resources["requests"] == yaml_value({{"cpu", "2"}, {"memory", "4096Mi"}}));
    CHECK(resources["limits"] ==
          yaml_value({{"cpu", "2"}, {"memory", "4096Mi"}, {"nvidia.com/gpu", "1"}}));
    auto plain = learners["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(plain["requests"] == yaml_value({{"cpu", "1"}}));  // no memory asked: none set
    CHECK(plain["limits"] == yaml_value({{"cpu", "1"}}));
    auto small = coordinator["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(lp::detail::kube::to_yaml(small).find("nvidia") == std::string::npos);
    CHECK_FALSE(small.contains("limits"));

    auto pod = learners["spec"]["template"]["spec"];
    CHECK(pod["subdomain"] == "lp-two-groups-ab1cd");
    CHECK(pod["restartPolicy"] == "Never");
    CHECK(pod["terminationGracePeriodSeconds"] == 15);
    CHECK(pod["volumes"][0]["secret"]["defaultMode"] == 0400);
    CHECK(pod["volumes"][0]["secret"]["secretName"] == "lp-two-groups-ab1cd-secret");
    CHECK(pod["containers"][0]["volumeMounts"][0]["mountPath"] == "/var/run/launchpad");
    CHECK(pod["containers"][0]["volumeMounts"][0]["readOnly"] == true);
    CHECK(pod["containers"][0]["command"] ==
          yaml_value::array({"/usr/local/bin/two", "--lp_launch=kubernetes",
                             "--lp_kube_image=registry.invalid/two:1", "--steps=5"}));
    CHECK(learners["spec"]["template"]["metadata"]["labels"]["launchpad.dev/group"] ==
          "learners");
    CHECK(learners["spec"]["template"]["metadata"]["labels"]["launchpad.dev/role"] ==
          "node");

    CHECK(env_of(learners, "LP_KUBE_ROLE") == "node");
    CHECK(env_of(learners, "LP_KUBE_GROUP") == "learners");
    CHECK(env_of(learners, "LP_KUBE_SERVICE") == "lp-two-groups-ab1cd");
    CHECK(env_of(learners, "LP_RENDEZVOUS") ==
          "https://lp-two-groups-ab1cd-coordinator-0.lp-two-groups-ab1cd:7300");
    CHECK(env_of(learners, "LP_RUN_DIR") == "/var/run/launchpad");
    CHECK(env_of(learners, "LP_POLICY") == "kubernetes");
    CHECK(env_of(learners, "OMP_NUM_THREADS") == "(unset)");
    CHECK(env_of(actors, "OMP_NUM_THREADS") == "2");
    CHECK(env_of(coordinator, "LP_KUBE_ROLE") == "coordinator");
    CHECK(env_of(coordinator, "LP_RENDEZVOUS") == "(unset)");
    auto ports = coordinator["spec"]["template"]["spec"]["containers"][0]["ports"];
    CHECK(ports[0]["containerPort"] == 7300);
    CHECK(ports[1]["containerPort"] == 7301);
  }

  TEST_CASE(
      "the Secret holds the run directory's files: no secret when insecure, a CA apart") {
    lp::program p("Two_Groups");
    add_two_groups(p);
    auto plan = fixed_plan();
    auto data = lp::detail::kube::secret_object(p, plan)["stringData"];
    CHECK(data["secret"] == "00112233445566778899aabbccddeeff\n");
    CHECK(data["tls.crt"] == plan.tls.certificate);
    CHECK(data["tls.key"] == plan.tls.key);
    CHECK_FALSE(data.contains("tls_ca.crt"));  // its own authority
    plan.tls.authority =
        "-----BEGIN CERTIFICATE-----\nSITE CA\n-----END CERTIFICATE-----\n";
    plan.secret.clear();
    data = lp::detail::kube::secret_object(p, plan)["stringData"];
    CHECK(data["tls_ca.crt"] == plan.tls.authority);
    CHECK_FALSE(data.contains("secret"));
    plan.tls = {};
    data = lp::detail::kube::secret_object(p, plan)["stringData"];
    CHECK(data == yaml_value::object());
    auto objects = lp::detail::kube::launch_objects(p, plan);
    CHECK(env_of(objects.back(), "LP_RENDEZVOUS") ==
          "http://lp-two-groups-ab1cd-coordinator-0.lp-two-groups-ab1cd:7300");
  }

  TEST_CASE(
      "files the graph carries (a Launchpad program's description) are the Secret's "
      "data, base64; a Secret over 1 MiB is refused") {
    using lp::detail::kube::manifest_detail::base64_of;
    // RFC 4648's test vectors, and bytes that are no text.
    CHECK(base64_of("") == "");
    CHECK(base64_of("f") == "Zg==");
    CHECK(base64_of("fo") == "Zm8=");
    CHECK(base64_of("foo") == "Zm9v");
    CHECK(base64_of("foob") == "Zm9vYg==");
    CHECK(base64_of("fooba") == "Zm9vYmE=");
    CHECK(base64_of("foobar") == "Zm9vYmFy");
    CHECK(base64_of(std::string("\0\xff\x80\x7f", 4)) == "AP+Afw==");

    lp::program p("Two_Groups");
    add_two_groups(p);
    auto plan = fixed_plan();
    CHECK_FALSE(lp::detail::kube::secret_object(p, plan).contains("data"));
    lp::detail::graph_access::carry_file(p, "program.cbor", std::string("\xa2\0x", 3));
    auto secret = lp::detail::kube::secret_object(p, plan);
    CHECK(secret["data"] == yaml_value{{"program.cbor", "ogB4"}});
    CHECK(secret["stringData"]["secret"] == "00112233445566778899aabbccddeeff\n");
    CHECK(lp::detail::kube::launch_yaml(p, plan).find("  program.cbor: \"ogB4\"\n") !=
          std::string::npos);

    lp::detail::graph_access::carry_file(p, "program.cbor",
                                         std::string(1024 * 1024, 'x'));
    CHECK_THROWS_WITH_AS(lp::detail::kube::secret_object(p, plan),
                         doctest::Contains("more than the 1048576 Kubernetes takes"),
                         lp::launch_error);
  }

  TEST_CASE("names: DNS labels, and Jobs of groups whose labels collide") {
    using lp::detail::kube::dns_label;
    CHECK(dns_label("Two_Groups", 63) == "two-groups");
    CHECK(dns_label("__A__b__", 63) == "a-b");
    CHECK(dns_label("", 5) == "x");
    CHECK(dns_label("___", 5) == "x");
    CHECK(dns_label("abcd-efgh", 5) == "abcd");  // never ends in '-'
    CHECK(dns_label("ÄÖ", 5) == "x");

    lp::program p("collide");
    p.group("Learner").add_node<t::Counter>();
    p.group("learner").add_node<t::Counter>();
    p.group(std::string(30, 'a')).add_node<t::Counter>();
    p.add_node<t::Counter>("alone");
    lp::detail::kube::launch_names names{"lp-collide-00000"};
    CHECK(names.job_of(p, 0) == "lp-collide-00000-learner-0");
    CHECK(names.job_of(p, 1) == "lp-collide-00000-learner-1");
    CHECK(names.job_of(p, 2) == "lp-collide-00000-" + std::string(20, 'a'));
    CHECK(names.job_of(p, 3) == "lp-collide-00000-nodes");
    auto objects = lp::detail::kube::launch_objects(p, fixed_plan());
    CHECK(env_of(objects[4], "LP_KUBE_GROUP") == "Learner");  // as in the graph
    CHECK(env_of(objects[5], "LP_KUBE_GROUP") == "learner");
    CHECK(env_of(objects[7], "LP_KUBE_GROUP") == "");
    CHECK(objects[7]["metadata"]["labels"]["launchpad.dev/group"] == "nodes");

    for (int i = 0; i < 20; ++i) {
      auto launch = lp::detail::kube::new_launch_name(std::string(80, 'Z') + "!");
      CAPTURE(launch);
      CHECK(launch.size() == 29);
      CHECK(launch.starts_with("lp-" + std::string(20, 'z') + "-"));
      CHECK(dns_label(launch, 63) == launch);
    }
    CHECK(lp::detail::kube::new_launch_name("p") !=
          lp::detail::kube::new_launch_name("p"));
  }

  // docs/kubernetes.md, "The manifests": a group's Job is named by its
  // label alone if no other group's Job could take that name; else by its
  // label's first 16 characters and its position among all the graph's
  // groups (those of nodes outside any group included), from 0.
  TEST_CASE("names: Jobs of groups that share a label are numbered by their position") {
    lp::program p("numbered");
    p.group("actors").add_node<t::Counter>();                     // 0
    p.group("Learner").add_node<t::Counter>();                    // 1
    p.add_node<t::Counter>("alone");                              // 2: "nodes"
    p.group("learner").add_node<t::Counter>();                    // 3
    p.group("Nodes").add_node<t::Counter>();                      // 4
    p.group("learner_1").add_node<t::Counter>();                  // 5: 1's numbered name
    p.group(std::string(18, 'b') + "_x").add_node<t::Counter>();  // 6
    p.group(std::string(18, 'B') + "-X").add_node<t::Counter>();  // 7
    lp::detail::kube::launch_names names{"lp-numbered-00000"};
    std::vector<std::string> jobs;
    for (std::size_t i = 0; i < 8; ++i) jobs.push_back(names.job_of(p, i));
    CHECK(jobs == std::vector<std::string>{
                      "lp-numbered-00000-actors",
                      "lp-numbered-00000-learner-1",
                      "lp-numbered-00000-nodes-2",
                      "lp-numbered-00000-learner-3",
                      "lp-numbered-00000-nodes-4",
                      "lp-numbered-00000-learner-1-5",
                      "lp-numbered-00000-" + std::string(16, 'b') + "-6",
                      "lp-numbered-00000-" + std::string(16, 'b') + "-7",
                  });
    CHECK(std::set<std::string>(jobs.begin(), jobs.end()).size() == jobs.size());
    // One group with a label of its own keeps it, whatever its position.
    lp::program q("plain");
    q.add_node<t::Counter>("alone");
    q.group("Learner").add_node<t::Counter>();
    lp::detail::kube::launch_names plain{"lp-plain-00000"};
    CHECK(plain.job_of(q, 0) == "lp-plain-00000-nodes");
    CHECK(plain.job_of(q, 1) == "lp-plain-00000-learner");
  }

  // docs/launching.md lists Kubernetes among the policies and the cluster
  // launches, beside Slurm.
  TEST_CASE("docs/launching.md names Kubernetes as a cluster launch beside Slurm") {
    std::ifstream in(std::filesystem::path(__FILE__).parent_path().parent_path() /
                     "docs" / "launching.md");
    REQUIRE(in);
    std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    for (const auto& [type, flag] :
         {std::pair<std::string, std::string_view>{"lp::slurm", lp::slurm::flag},
          {"lp::kubernetes", lp::kubernetes::flag}}) {
      auto row = "| `" + type + "` | `" + std::string(flag) + "` |";
      CAPTURE(row);
      auto first = doc.find(row);
      CHECK(first != std::string::npos);                     // where every node is
      CHECK(doc.find(row, first + 1) != std::string::npos);  // from main()
    }
    auto from = doc.find("## Not there yet");
    REQUIRE(from != std::string::npos);
    auto section = doc.substr(from, doc.find("\n## ", from + 1) - from);
    INFO(section);
    CHECK(section.find("(kubernetes.md") != std::string::npos);
    CHECK(section.find("(slurm.md") != std::string::npos);
    CHECK(section.find("the one cluster launch") == std::string::npos);
  }

  TEST_CASE("the flags: the image is required, values are checked, defaults") {
    lp::program p("Two_Groups");
    add_two_groups(p);
    std::ostringstream out, err;
    CHECK_THROWS_WITH_AS(write_launch(p, parsed({}), out, err),
                         doctest::Contains("add --lp_kube_image=<image>"),
                         lp::usage_error);
    CHECK_THROWS_WITH_AS(
        [&] {
          auto line = parsed({"--lp_launch=kubernetes"});
          lp::detail::run_kube_manifests(p, line);
        }(),
        doctest::Contains("needs the image its pods run"), lp::usage_error);
    auto defaults = parsed({});
    CHECK(defaults.kube.kube_namespace == "default");
    CHECK(defaults.kube.dir == "lp-kube");
    CHECK(lp::detail::kube::binary_in_image(defaults) == "/usr/local/bin/two");
    auto binary = parsed({"--lp_kube_binary=/opt/x"});
    CHECK(lp::detail::kube::binary_in_image(binary) == "/opt/x");
    auto refused = [](std::vector<std::string> words) {
      try {
        parsed(std::move(words));
      } catch (const lp::usage_error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CHECK(refused({"--lp_kube_namespace=Research"}).find("give a DNS label") !=
          std::string::npos);
    CHECK(refused({"--lp_kube_namespace=-x"}).find("give a DNS label") !=
          std::string::npos);
    CHECK(refused({"--lp_kube_namespace=" + std::string(64, 'a')}) != "no error");
    CHECK(refused({"--lp_kube_namespace=team-7"}) == "no error");
    CHECK(refused({"--lp_kube_image=reg/x:1\nkind: Pod"}).find("on one line") !=
          std::string::npos);
    CHECK(refused({"--lp_kube_image=reg/x 1"}).find("give an image reference") !=
          std::string::npos);
    CHECK(refused({"--lp_kube_image=registry.invalid:5000/a/b@sha256:0f"}) == "no error");
    CHECK(refused({"--lp_kube_binary=bin/x"}).find("absolute path") != std::string::npos);
    CHECK(refused({"--lp_kube_dir=a\rb"}).find("on one line") != std::string::npos);
  }

  TEST_CASE(
      "the pods' command line: the user's, less the workstation's flags, with the "
      "policy") {
    using words = std::vector<std::string>;
    auto arguments = lp::detail::kube::container_arguments(
        parsed({"--lp_launch=kubernetes", "--lp_dry_run", "--lp_kube_dir", "out",
                "--lp_kube_image=i:1", "--lp_kube_dir=o2", "--lp_dry_run=no", "--x",
                "--lp_tls_cert", "c.pem", "--lp_tls_key=k", "--", "--lp_dry_run",
                "--lp_kube_dir=u"}));
    CHECK(arguments == words{"--lp_launch=kubernetes", "--lp_kube_image=i:1", "--x", "--",
                             "--lp_dry_run", "--lp_kube_dir=u"});
    // main() chose the policy: the pods are told.
    CHECK(lp::detail::kube::container_arguments(parsed({"--x"})) ==
          words{"--lp_launch=kubernetes", "--x"});
  }

  TEST_CASE(
      "--lp_dry_run writes launch.yaml and kustomization.yaml, yours alone; else "
      "stdout") {
    test_process::scratch dir;
    lp::program p("Two_Groups");
    add_two_groups(p);
    auto flags =
        parsed({"--lp_launch=kubernetes", "--lp_kube_image=registry.invalid/two:1",
                "--lp_dry_run", "--lp_kube_dir=" + dir.path + "/kube",
                "--lp_kube_namespace=research"});
    std::ostringstream out, err;
    CHECK(write_launch(p, flags, out, err, "lp-two-groups-zz9zz") == 0);
    auto launch_dir = dir.path + "/kube/lp-two-groups-zz9zz";
    CHECK(mode_of(launch_dir) == 0700);
    CHECK(mode_of(launch_dir + "/launch.yaml") == 0600);
    CHECK(mode_of(launch_dir + "/kustomization.yaml") == 0600);
    CHECK(read_all(launch_dir + "/kustomization.yaml") ==
          "apiVersion: \"kustomize.config.k8s.io/v1beta1\"\nkind: \"Kustomization\"\n"
          "resources:\n  - \"launch.yaml\"\n");
    auto manifests = read_all(launch_dir + "/launch.yaml");
    CHECK(manifests.find("name: \"lp-two-groups-zz9zz-secret\"") != std::string::npos);
    CHECK(manifests.find("tls.key: \"-----BEGIN PRIVATE KEY-----") != std::string::npos);
    CHECK(manifests.find("--lp_dry_run") == std::string::npos);
    CHECK(out.str().find("kubectl apply -k " + launch_dir + "\n") != std::string::npos);
    CHECK(err.str().find(
              "kubectl -n research logs -f job/lp-two-groups-zz9zz-coordinator") !=
          std::string::npos);
    // A launch of the same name is not overwritten.
    std::ostringstream again;
    CHECK_THROWS_WITH(write_launch(p, flags, again, again, "lp-two-groups-zz9zz"),
                      doctest::Contains("choose another --lp_kube_dir"));

    auto piped = parsed(
        {"--lp_kube_image=registry.invalid/two:1", "--lp_insecure", "--lp_tls=off"});
    std::ostringstream yaml, note;
    CHECK(write_launch(p, piped, yaml, note) == 0);
    CHECK(yaml.str().starts_with("apiVersion: \"v1\"\nkind: \"Secret\"\n"));
    CHECK(yaml.str().find("  secret: \"") == std::string::npos);  // the Secret has none
    CHECK(yaml.str().find("tls.crt") == std::string::npos);
    CHECK(note.str().find("are on stdout, for kubectl apply -f -") != std::string::npos);
    CHECK(note.str().find("kubectl logs -f job/lp-two-groups-") != std::string::npos);
  }

  TEST_CASE(
      "in a pod: the group and the index name the process, and a mismatch says why") {
    using lp::detail::kube::unit_of_pod;
    lp::program p("pods");
    auto c = p.add_node<t::Counter>("counter");
    auto producers = p.group("producers");
    producers.add_node<t::Counter>();
    producers.add_node<t::Counter>();
    auto pair = p.group("pair");
    pair.colocate();
    pair.add_node<t::Counter>();
    pair.add_node<t::Counter>();
    (void)c;
    struct pod_env {
      pod_env(const char* group, const char* index) {
        if (group)
          ::setenv("LP_KUBE_GROUP", group, 1);
        else
          ::unsetenv("LP_KUBE_GROUP");
        ::setenv("JOB_COMPLETION_INDEX", index, 1);
      }
      ~pod_env() {
        ::unsetenv("LP_KUBE_GROUP");
        ::unsetenv("JOB_COMPLETION_INDEX");
      }
    };
    {
      pod_env env("producers", "1");
      CHECK(unit_of_pod(p).labels == std::vector<std::string>{"producers/1"});
    }
    {
      pod_env env("", "0");  // the nodes outside any group
      CHECK(unit_of_pod(p).labels == std::vector<std::string>{"counter"});
    }
    {
      pod_env env("pair", "0");  // a colocated group is one process
      CHECK(unit_of_pod(p).labels == std::vector<std::string>{"pair/0", "pair/1"});
    }
    {
      pod_env env("producers", "2");
      CHECK_THROWS_WITH(
          unit_of_pod(p),
          doctest::Contains("has 2 processes in group 'producers', but the pod has "
                            "index 2: was the image built from another version"));
    }
    {
      pod_env env(nullptr, "0");
      CHECK_THROWS_WITH(unit_of_pod(p), doctest::Contains("LP_KUBE_GROUP is not set"));
    }
    {
      pod_env env("producers", "one");
      CHECK_THROWS_WITH(unit_of_pod(p),
                        doctest::Contains("JOB_COMPLETION_INDEX='one' is not an index"));
    }
  }
}
