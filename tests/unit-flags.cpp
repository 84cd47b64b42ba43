// --lp_* flags: which are ours, which are the user's.
#include <algorithm>
#include <iostream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/detail/cli/command_line.hpp>
#include <launchpad/detail/cli/flag_tables.hpp>
#include <launchpad/detail/cli/graph_picture.hpp>
#include <launchpad/detail/slurm/script.hpp>
#include <sstream>

#include "command.hpp"
#include "services.hpp"

namespace life_like {
struct User {
  lp::client<t::Counter> counter;
  int use() { return static_cast<int>(counter.get()); }
};
LP_SERVICE(User, use);
}  // namespace life_like

namespace resumable {
// Checkpointed, and done at once: a launch of it ends by itself.
struct Saved {
  void run() {}
  long lp_save() const { return total; }
  void lp_restore(long saved) { total = saved; }
  long total = 0;
};
LP_SERVICE(Saved);
struct Unsaved {
  void run() {}
};
LP_SERVICE(Unsaved);
}  // namespace resumable

// Every table of flags, checked here, at compile time, rather than in every
// file that launches (detail/cli/flag_row.hpp, rows_are_sound).
static_assert(lp::detail::flag_tables_are_sound(lp::detail::every_flag_table),
              "each flag row: one --lp_ name, in no other row of any table, a help "
              "text, and a hint and an example unless it is a switch");

namespace {
struct args {
  explicit args(std::vector<std::string> words) : storage(std::move(words)) {
    for (auto& word : storage) pointers.push_back(word.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(storage.size()); }
  char** argv() { return pointers.data(); }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
};

// The message of the usage error that parsing `words` raises, without the
// "[lp.usage_error] " prefix; "no error" when there is none.
std::string usage_error_of(std::vector<std::string> words) {
  words.insert(words.begin(), "prog");
  try {
    lp::detail::read_command_line(std::move(words), {.tls_together = false});
  } catch (const lp::usage_error& e) {
    return std::string(e.what()).substr(std::string("[lp.usage_error] ").size());
  }
  return "no error";
}

lp::detail::launch_settings parsed(std::vector<std::string> words) {
  words.insert(words.begin(), "prog");
  return lp::detail::read_command_line(std::move(words), {.tls_together = false});
}

// Calls f(row) for each row of each table of flags that lp::launch reads.
template <class F>
void each_row(F f) {
  for (const auto& table : lp::detail::every_flag_table)
    for (const auto& row : table) f(row);
}

struct launched {
  int status;
  std::string errors;  // what it wrote to std::cerr
};

// lp::launch(p, argc, argv) under test_mt, with `words` after "prog".
launched launch_test_mt(const lp::program& p, std::vector<std::string> words) {
  words.insert(words.begin(), {"prog", "--lp_launch=test_mt"});
  args a(std::move(words));
  std::ostringstream errors;
  auto* terminal = std::cerr.rdbuf(errors.rdbuf());
  int status = lp::launch(p, a.argc(), a.argv());
  std::cerr.rdbuf(terminal);
  return {status, errors.str()};
}
}  // namespace

TEST_SUITE("flags") {
  TEST_CASE("--lp_launch in both spellings; the user's own flags are left alone") {
    using lp::detail::policy_kind;
    auto a = parsed({"--lp_launch=test_mt", "--my_flag=3", "input.txt"});
    CHECK(a.launch == policy_kind::test_mt);
    CHECK(a.user_arguments == std::vector<std::string>{"--my_flag=3", "input.txt"});
    auto b = parsed({"--lp_launch", "local_mt", "-v"});
    CHECK(b.launch == policy_kind::local_mt);
    CHECK(b.user_arguments == std::vector<std::string>{"-v"});
    auto c = parsed({"--", "--lp_bogus"});  // after "--" nothing is ours
    CHECK_FALSE(c.launch.has_value());
    CHECK(c.user_arguments == std::vector<std::string>{"--", "--lp_bogus"});
  }

  TEST_CASE("unknown --lp_ flags and missing values are usage errors") {
    CHECK_THROWS_WITH_AS(parsed({"--lp_lunch=local_mt"}),
                         doctest::Contains("unknown flag --lp_lunch"), lp::usage_error);
    CHECK_THROWS_WITH_AS(parsed({"--lp_launch"}), doctest::Contains("needs a value"),
                         lp::usage_error);
  }

  TEST_CASE(
      "a switch is on alone or as =true|1|yes, off as =false|0|no, else a usage error") {
    CHECK_FALSE(parsed({}).process.insecure);
    for (const char* on :
         {"--lp_insecure", "--lp_insecure=true", "--lp_insecure=1", "--lp_insecure=yes"})
      CHECK_MESSAGE(parsed({on}).process.insecure, on);
    for (const char* off : {"--lp_insecure=false", "--lp_insecure=0", "--lp_insecure=no"})
      CHECK_FALSE_MESSAGE(parsed({off}).process.insecure, off);
    CHECK_FALSE(parsed({"--lp_insecure", "--lp_insecure=false"})
                    .process.insecure);  // the last one wins
    CHECK(parsed({}).same_host.shared_memory_mb == 256);
    CHECK(parsed({"--lp_shared_memory_mb=0"}).same_host.shared_memory_mb == 0);
    CHECK(usage_error_of({"--lp_shared_memory_mb=-1"}) ==
          "--lp_shared_memory_mb=-1: give a whole number from 0 to 1048576");
    // its help names the metric in protocol.toml's spelling, joined in
    CHECK(lp::detail::shared_memory_mb_help.view().find(
              "go through the socket, counted in lp_shared_memory_fallbacks_total (0 to "
              "1048576, 0: none, default 256)") != std::string_view::npos);
    CHECK_FALSE(parsed({}).process.system_malloc);
    CHECK(parsed({"--lp_system_malloc"}).process.system_malloc);
    CHECK(usage_error_of({"--lp_insecure=maybe"}) ==
          "--lp_insecure=maybe: give true, false, 1, 0, yes or no (--lp_insecure alone "
          "is true)");
    CHECK(usage_error_of({"--lp_insecure=TRUE"})
              .starts_with("--lp_insecure=TRUE: give true,"));
    CHECK(usage_error_of({"--lp_insecure="}).starts_with("--lp_insecure=: give true,"));
    // The next word is never a switch's value: it may be the program's own.
    auto next = parsed({"--lp_insecure", "false"});
    CHECK(next.process.insecure);
    CHECK(next.user_arguments.back() == "false");
    each_row([](const lp::detail::flag_row& row) {
      if (!row.is_switch()) return;
      std::string name(row.name);
      CAPTURE(name);
      REQUIRE(static_cast<bool>(row.on));  // not checkable at compile time (flag_row.hpp)
      auto on = parsed({name}), yes = parsed({name + "=yes"}),
           no = parsed({name + "=no"});
      CHECK(row.on(on));
      CHECK(row.on(yes));
      CHECK_FALSE(row.on(no));
      CHECK(usage_error_of({name + "=2"}) ==
            name + "=2: give true, false, 1, 0, yes or no (" + name + " alone is true)");
    });
  }

  TEST_CASE("a flag that needs a value never takes another -- word as its value") {
    CHECK(usage_error_of({"--lp_launch", "--my_flag"}) ==
          "--lp_launch needs a value, e.g. --lp_launch=local_mp; a value that starts "
          "with -- "
          "must follow the =");
    CHECK(usage_error_of({"--lp_slurm_sbatch", "--qos=high"}) ==
          "--lp_slurm_sbatch needs a value, e.g. --lp_slurm_sbatch=--qos=high; a value "
          "that "
          "starts with -- must follow the =");
    CHECK(parsed({"--lp_slurm_sbatch=--qos=high"}).slurm.sbatch ==
          std::vector<std::string>{"--qos=high"});
    // One dash: a value (a bad policy).
    CHECK(usage_error_of({"--lp_launch", "-v"}) ==
          "--lp_launch=-v is not a launch policy; choose test_mt, local_mt, local_mp, "
          "slurm or kubernetes");
    each_row([](const lp::detail::flag_row& row) {
      if (row.is_switch()) return;
      std::string name(row.name), example(row.example);
      CAPTURE(name);
      CHECK(static_cast<bool>(row.set));  // not checkable at compile time (flag_row.hpp)
      CHECK(static_cast<bool>(row.get));
      std::string needs = name + " needs a value, e.g. " + name + "=" + example;
      std::string hint = "; a value that starts with -- must follow the =";
      CHECK(usage_error_of({name, "--my_flag"}) == needs + hint);
      CHECK(usage_error_of({name, "--lp_insecure"}) == needs + hint);
      CHECK(usage_error_of({name, "--", "value"}) == needs);
      CHECK(usage_error_of({name}) == needs);
      CHECK(usage_error_of({name + "="}) == needs);
      CHECK(usage_error_of({name, ""}) == needs);
      // The example in the message is one that works, in both spellings.
      CHECK(usage_error_of({name + "=" + example}) == "no error");
      if (!example.starts_with("--"))
        CHECK(usage_error_of({name, example}) == "no error");
    });
  }

  TEST_CASE("bad values name the flag and what to give") {
    CHECK(usage_error_of({"--lp_terminal=screen"}) ==
          "--lp_terminal=screen: choose current, files or tmux");
    CHECK(usage_error_of({"--lp_graph", "png"}) ==
          "--lp_graph=png: choose dot, mermaid or json");
    CHECK(usage_error_of({"--lp_max_body_mb=0"}) ==
          "--lp_max_body_mb=0: give a whole number from 1 to 1048576");
    CHECK(usage_error_of({"--lp_termination_notice_secs=5s"}) ==
          "--lp_termination_notice_secs=5s: give a whole number from 0 to 86400");
    CHECK(usage_error_of({"--lp_status_port=http"}) ==
          "--lp_status_port=http: give a port from 0 to 65535, or off");
    CHECK(usage_error_of({"--lp_status_port=65536"}) ==
          "--lp_status_port=65536: give a port from 0 to 65535, or off");
    CHECK(parsed({"--lp_status_port=off"}).status.port == lp::detail::port_or_off{});
    CHECK(parsed({"--lp_status_port", "8080"}).status.port ==
          lp::detail::port_or_off{8080});
    CHECK(parsed({}).status.port == lp::detail::port_or_off{0});
    auto status =
        parsed({"--lp_status=/tmp/lp-x-1", "--lp_json", "--lp_status_linger_secs=5"});
    CHECK(status.status.of == "/tmp/lp-x-1");
    CHECK(status.status.json);
    CHECK(status.status.linger_secs == 5);
    auto good =
        parsed({"--lp_terminal", "tmux", "--lp_max_body_mb=1", "--lp_log_dir", "out"});
    CHECK(good.process.terminal == lp::terminal_kind::tmux);
    CHECK(good.server.max_body_mb == 1);
    CHECK(good.process.log_dir == "out");
  }

  TEST_CASE("--lp_help lists every flag of the table once, within 80 columns") {
    std::string help = lp::detail::flags_help();
    for (std::size_t start = 0, end = 0; start < help.size(); start = end + 1) {
      end = std::min(help.find('\n', start), help.size());
      CHECK(end - start <= lp::detail::help_width);
    }
    auto is_name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
    int rows_in_all = 0;
    each_row([&](const lp::detail::flag_row& row) {
      ++rows_in_all;
      std::string name(row.name);
      CAPTURE(name);
      int seen = 0;
      for (auto at = help.find(name); at != std::string::npos;
           at = help.find(name, at + 1))
        if (at + name.size() == help.size() || !is_name_char(help[at + name.size()]))
          ++seen;
      CHECK(seen == 1);
      CHECK(help.find("  " + name +
                      (row.is_switch() ? " " : "=" + std::string(row.hint))) !=
            std::string::npos);
      CHECK(help.find(std::string(row.help.substr(0, 20))) != std::string::npos);
    });
    int entries = 0;
    std::size_t start = 0;
    for (auto end = help.find('\n'); end != std::string::npos;
         end = help.find('\n', start)) {
      std::string line = help.substr(start, end - start);
      CHECK_MESSAGE(line.size() <= 80, line);
      if (line.starts_with("  --lp_")) ++entries;
      start = end + 1;
    }
    CHECK(start == help.size());  // ends with a newline
    CHECK(entries == rows_in_all);
  }

  TEST_CASE(
      "--lp_graph draws the graph: groups, nodes with their service, edges from "
      "handles; or prints it as JSON") {
    lp::program q("edges");
    auto target = q.add_node<t::Counter>("counter");
    q.group("users").add_node<life_like::User>(target);
    auto dot = lp::detail::graph_picture(q, "dot");
    CHECK(dot.find("digraph \"edges\"") != std::string::npos);
    CHECK(dot.find("subgraph \"cluster_users\"") != std::string::npos);
    CHECK(dot.find("\"users/0\" -> \"counter\" [label=\"t::Counter\"]") !=
          std::string::npos);
    CHECK(dot.find("\"counter\" [label=\"counter\\nt::Counter\"]") != std::string::npos);
    auto mermaid = lp::detail::graph_picture(q, "mermaid");
    CHECK(mermaid.rfind("flowchart LR\n", 0) == 0);
    CHECK(mermaid.find("subgraph users") != std::string::npos);
    CHECK(mermaid.find("n1 -- t::Counter --> n0") != std::string::npos);
    // For programs (a Launchpad program's CppNode reads it): each node's
    // label, group, service, run() and edges.
    auto json = nlohmann::json::parse(lp::detail::graph_picture(q, "json"));
    CHECK(json["name"] == "edges");
    CHECK(json["nodes"].size() == 2);
    CHECK(json["nodes"][0] == nlohmann::json{{"label", "counter"},
                                             {"group", ""},
                                             {"service", "t::Counter"},
                                             {"has_run", false},
                                             {"edges", nlohmann::json::array()}});
    CHECK(json["nodes"][1]["label"] == "users/0");
    CHECK(json["nodes"][1]["group"] == "users");
    CHECK(json["nodes"][1]["edges"] == nlohmann::json{"counter"});
    args graph({"prog", "--lp_graph=mermaid"});
    CHECK(lp::launch(q, graph.argc(), graph.argv()) == 0);  // printed, nothing launched
    args bad({"prog", "--lp_graph=png"});
    CHECK(lp::launch(q, bad.argc(), bad.argv()) == 2);
  }

  TEST_CASE("lp::launch: --lp_help exits 0, a bad flag or policy exits 2, nothing runs") {
    lp::program p("flags");
    p.add_node<t::Counter>("counter");  // would serve forever if launched
    args help({"prog", "--lp_help"});
    CHECK(lp::launch(p, help.argc(), help.argv()) == 0);
    args bad({"prog", "--lp_nope"});
    CHECK(lp::launch(p, bad.argc(), bad.argv()) == 2);
    args policy({"prog", "--lp_launch=cloud"});
    CHECK(lp::launch(p, policy.argc(), policy.argv()) == 2);
  }

  TEST_CASE(
      "--lp_resume must name a directory with a checkpoint of this program, else exit "
      "2") {
    test_process::scratch dir;
    lp::program p("resumable");
    p.add_node<resumable::Saved>("saved");
    auto own = "--lp_checkpoint_dir=" + dir.path + "/own";
    auto refused = [&](const std::string& resume, const std::string& why) {
      auto result = launch_test_mt(p, {own, "--lp_resume=" + resume});
      INFO(result.errors);
      CHECK(result.status == 2);
      CHECK(result.errors.find("[lp.usage_error] --lp_resume=" + resume + ": " + why) !=
            std::string::npos);
      CHECK_FALSE(dir.has("own"));  // nothing ran
    };
    refused(dir.path + "/no-such-checkpoints", "no such directory");
    std::filesystem::create_directories(dir.path + "/empty");
    refused(dir.path + "/empty",
            "it holds no checkpoint of a node of program 'resumable' (saved.ckpt)");
    std::ofstream(dir.path + "/file") << "not a directory";
    refused(dir.path + "/file", "not a directory");
    lp::program plain("plain");
    plain.add_node<resumable::Unsaved>("unsaved");
    auto result = launch_test_mt(plain, {"--lp_resume=" + dir.path + "/empty"});
    CHECK(result.status == 2);
    CHECK(result.errors.find("no node of program 'plain' keeps checkpoints") !=
          std::string::npos);

    std::string state;
    lp::detail::cbor::write(state, 7L);
    lp::detail::write_checkpoint(dir.path + "/earlier/saved.ckpt", "Saved", state);
    auto resumed = launch_test_mt(p, {own, "--lp_resume=" + dir.path + "/earlier"});
    INFO(resumed.errors);
    CHECK(resumed.status == 0);
    CHECK(resumed.errors.find("[lp] saved restored from " + dir.path +
                              "/earlier/saved.ckpt") != std::string::npos);
  }

  TEST_CASE(
      "the line that goes on from a launch's checkpoints: its own, its --lp_resume "
      "replaced") {
    using words = std::vector<std::string>;
    CHECK(lp::detail::resume_command(
              {"prog", "--lp_resume", "old", "--x", "--", "--lp_resume=u"}, "new") ==
          words{"prog", "--x", "--lp_resume=new", "--", "--lp_resume=u"});
    CHECK(lp::detail::resume_command({"prog", "--lp_resume=old", "--lp_resume", "--v"},
                                     "new") == words{"prog", "--v", "--lp_resume=new"});
  }

  TEST_CASE(
      "the Slurm job's command line drops the submitter's own flags, in every spelling") {
    auto flags = parsed({"--lp_launch=slurm", "--lp_dry_run", "--lp_slurm_detach=yes",
                         "--lp_dry_run=no", "--x", "--", "--lp_dry_run"});
    CHECK(lp::detail::job_arguments(flags) ==
          std::vector<std::string>{"prog", "--lp_launch=slurm", "--x", "--",
                                   "--lp_dry_run"});
  }
}

TEST_SUITE("command line: what a launcher passes on") {
  TEST_CASE(
      "each flag reads its words, in every spelling; the user's words are the rest") {
    auto line = parsed({"--lp_slurm_time", "1:00", "--x", "--lp_dry_run=no", "--lp_json",
                        "v", "--", "--lp_help"});
    CHECK(line.slurm.time == "1:00");
    CHECK_FALSE(line.dry_run);
    CHECK(line.status.json);
    CHECK_FALSE(line.help);  // after "--": the user's
    CHECK(line.user_arguments == std::vector<std::string>{"--x", "v", "--", "--lp_help"});
    CHECK(line.command.size() == 9);  // as typed, for messages that show it back
    // Of a flag given twice, in either spelling, the last counts.
    CHECK(parsed({"--lp_log_dir", "a", "--lp_log_dir=b"}).process.log_dir == "b");
    CHECK(parsed({"--lp_log_dir=a", "--lp_log_dir", "b"}).process.log_dir == "b");
  }

  TEST_CASE("the shared flags are read and checked together before any launcher's") {
    CHECK_THROWS_WITH_AS(lp::detail::read_command_line(
                             {"prog", "--lp_slurm_sbatch=qos", "--lp_tls_cert=c.pem"}),
                         doctest::Contains("--lp_tls_cert and --lp_tls_key go together"),
                         lp::usage_error);
  }

  TEST_CASE(
      "a started process's command line: each flag that goes to children, written from "
      "the settings, then the user's words unchanged") {
    using words = std::vector<std::string>;
    // Nothing given: nothing but the user's words, in their order.
    CHECK(lp::detail::child_arguments(parsed({"b", "--a=1", "--", "--lp_x"})) ==
          words{"b", "--a=1", "--", "--lp_x"});
    // In any spelling, in any order among the user's words: each flag once,
    // as --name=value, before them.
    CHECK(lp::detail::child_arguments(
              parsed({"in.txt", "--lp_log_dir", "out", "-v", "--lp_insecure=yes",
                      "--lp_log_dir=l", "--lp_slurm_sbatch=--a",
                      "--lp_slurm_sbatch=--qos=high", "--lp_insecure"})) ==
          words{"--lp_log_dir=l", "--lp_insecure", "--lp_slurm_sbatch=--a",
                "--lp_slurm_sbatch=--qos=high", "in.txt", "-v"});
    // A setting a launcher changes goes with it: no argv text to edit.
    auto settings = parsed({"--x"});
    settings.checkpoints.dir = "/ckpt";
    settings.process.system_malloc = true;
    CHECK(lp::detail::child_arguments(settings) ==
          words{"--lp_system_malloc", "--lp_checkpoint_dir=/ckpt", "--x"});
    // Every row: its example goes to children, or stays, as the row says, and
    // the child reads back what it was given.
    each_row([](const lp::detail::flag_row& row) {
      std::string name(row.name);
      CAPTURE(name);
      if (name == "--lp_help") return;  // it would end the launch before any child
      words given{row.is_switch() ? name : name + "=" + std::string(row.example)};
      auto settings = parsed(given);
      auto child = lp::detail::child_arguments(settings);
      bool at_default = row.is_switch() ? false : row.get(settings) == row.get({});
      CHECK(child == (row.to_children && !at_default ? given : words{}));
      auto again = child;
      again.insert(again.begin(), "prog");
      CHECK(lp::detail::child_arguments(lp::detail::read_command_line(again)) == child);
    });
    // Only what the process that the user started reads stays with it.
    std::vector<std::string> staying;
    each_row([&](const lp::detail::flag_row& row) {
      if (!row.to_children) staying.emplace_back(row.name);
    });
    CHECK(staying == words{"--lp_tls_cert", "--lp_tls_key", "--lp_tls_ca", "--lp_graph",
                           "--lp_status", "--lp_json", "--lp_slurm_detach",
                           "--lp_kube_dir", "--lp_dry_run", "--lp_help"});
  }
}
