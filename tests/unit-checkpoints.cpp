// Checkpoints: a node's state saved while it runs and when it stops, and
// restored before a restarted (or resumed) node serves; files that are torn,
// damaged or another service's are never taken for a state.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <random>

#include "command.hpp"
#include "processes/scenarios.hpp"
#include "scenario_launch.hpp"
#include "services.hpp"

namespace ckpt {
using namespace std::chrono_literals;
using test_process::eventually;

using test_process::program_path;

using test_process::scratch;

lp::process_test_options options_for(const std::string& scenario, const scratch& dir,
                                     std::vector<std::string> more = {}) {
  auto options = test_process::scenario_options(scenario, dir);
  options.arguments.push_back("--lp_checkpoint_dir=" + dir.path + "/checkpoints");
  for (auto& flag : more) options.arguments.push_back(flag);
  options.termination_notice = std::chrono::seconds(10);
  return options;
}

// The value a checkpoint of a service returning T from lp_save holds.
template <class T>
std::optional<T> saved(const std::string& path, std::string_view service) {
  auto bytes = lp::detail::read_checkpoint(path, service);
  if (!bytes) return std::nullopt;
  std::size_t at = 0;
  return lp::detail::cbor::read_as<T>(*bytes, at, lp::detail::protocol::max_depth);
}

// Until the launcher has seen the node process `pid` end.
bool gone(lp::controller& running, pid_t pid) {
  return eventually(
      [&] {
        auto pids = running.pids();
        return std::find(pids.begin(), pids.end(), pid) == pids.end();
      },
      30s);
}

// Writes a Tally's checkpoint of `total` at `file`, saved `age` ago.
void tally_saved(const std::string& file, long total, std::chrono::seconds age) {
  std::string state;
  lp::detail::cbor::write(state, total);
  lp::detail::write_checkpoint(file, "Tally", state);
  std::filesystem::last_write_time(file,
                                   std::filesystem::file_time_type::clock::now() - age);
}

// What follows `prefix` in `text`, up to the end of its line or `end`.
std::string after(const std::string& text, const std::string& prefix, char end = '\n') {
  auto at = text.find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size();
  return text.substr(at, std::min(text.find(end, at), text.find('\n', at)) - at);
}

// Runs the checkpointed scenario's command `words` until its tally serves,
// then stops it as Ctrl+C does; returns its output.
std::string run_and_interrupt(const std::vector<std::string>& words) {
  test_process::command launcher(words);
  REQUIRE(eventually([&] { return launcher.count("tally/0 serving at") == 1; }, 60s));
  ::kill(launcher.pid, SIGINT);
  auto status = launcher.exit_code(60s);
  INFO(launcher.output());
  CHECK(status == 0);
  return launcher.output();
}

// Retries an idempotent read while the node restarts.
long get_when_back(lp::client<scenarios::Tally>& tally) {
  long value = -1;
  REQUIRE(eventually(
      [&] {
        try {
          value = tally.get();
          return true;
        } catch (const lp::transport_error&) {
          return false;
        }
      },
      30s));
  return value;
}
}  // namespace ckpt

using namespace std::chrono_literals;
using test_process::eventually;

TEST_SUITE("checkpoints") {
  TEST_CASE(
      "kill -9 between checkpoints: the restarted node has the last checkpoint's state") {
    ckpt::scratch dir;
    lp::program p("scenario_checkpointed");
    scenarios::make(p, "checkpointed", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, ckpt::options_for("checkpointed", dir));
    auto tally = running.client(p.find<scenarios::Tally>("tally/0"));
    auto file = dir.path + "/checkpoints/tally/0.ckpt";
    long acknowledged = 0;
    for (int round = 1; round <= 3; ++round) {
      CAPTURE(round);
      for (int i = 0; i < 10; ++i) acknowledged = tally.add(1);
      // Every call answered before this checkpoint is in it.
      REQUIRE(eventually([&] { return ckpt::saved<long>(file, "Tally") == acknowledged; },
                         20s));
      for (int i = 0; i < 5; ++i) acknowledged = tally.add(1);
      auto pids = running.pids();
      REQUIRE(pids.size() == 1);
      ::kill(pids[0], SIGKILL);
      // Once the launcher saw it die, the checkpoint on disk is the one the
      // restart takes (and a get() cannot reach the killed process).
      REQUIRE(ckpt::gone(running, pids[0]));
      long back = ckpt::get_when_back(tally);
      auto last = ckpt::saved<long>(file, "Tally");
      REQUIRE(last);
      CHECK(back == *last);
      CHECK(back >= acknowledged - 5);
      CHECK(back <= acknowledged);
      acknowledged = back;
    }
    CHECK(running.stop());
    CHECK(running.summary().empty());
  }

  TEST_CASE("a stop saves the state; --lp_resume starts a later launch from it") {
    ckpt::scratch dir;
    lp::program p("scenario_checkpointed");
    scenarios::make(p, "checkpointed", dir.path);
    auto file = dir.path + "/checkpoints/tally/0.ckpt";
    {
      auto running = lp::launch<lp::test_multi_processing>(
          p, ckpt::options_for("checkpointed", dir));
      CHECK(running.client(p.find<scenarios::Tally>("tally/0")).add(41) == 41);
      CHECK(running.stop());
    }
    CHECK(ckpt::saved<long>(file, "Tally") == 41);
    auto options = ckpt::options_for("checkpointed", dir,
                                     {"--lp_resume=" + dir.path + "/checkpoints"});
    options.arguments[2] = "--lp_checkpoint_dir=" + dir.path + "/second";
    auto running = lp::launch<lp::test_multi_processing>(p, options);
    CHECK(running.client(p.find<scenarios::Tally>("tally/0")).add(1) == 42);
    CHECK(running.stop());
    CHECK(ckpt::saved<long>(dir.path + "/second/tally/0.ckpt", "Tally") == 42);
  }

  TEST_CASE(
      "a node restores the newer of its own checkpoint and the one in --lp_resume") {
    ckpt::scratch dir;
    lp::program p("scenario_checkpointed");
    scenarios::make(p, "checkpointed", dir.path);
    auto own = dir.path + "/checkpoints/tally/0.ckpt";
    auto earlier = dir.path + "/earlier/tally/0.ckpt";
    auto restored = [&] {
      auto running = lp::launch<lp::test_multi_processing>(
          p, ckpt::options_for("checkpointed", dir,
                               {"--lp_resume=" + dir.path + "/earlier"}));
      long total = running.client(p.find<scenarios::Tally>("tally/0")).get();
      CHECK(running.stop());
      return total;
    };
    // Its own, older: left there by an earlier launch into the same directory.
    ckpt::tally_saved(own, 5, 3600s);
    ckpt::tally_saved(earlier, 40, 60s);
    CHECK(restored() == 40);
    // Its own, newer: saved since it resumed (as a restart, or a launch
    // started again with the same command, finds it).
    ckpt::tally_saved(own, 7, 0s);
    ckpt::tally_saved(earlier, 40, 60s);
    CHECK(restored() == 7);
  }

  TEST_CASE(
      "by default a launch's checkpoints go to the user's state directory, and its end "
      "says where they are and how to go on from them") {
    ckpt::scratch dir;
    auto program = ckpt::program_path();
    auto state = dir.path + "/state";
    auto home = state + "/launchpad/checkpoints/scenario_checkpointed/";
    std::vector<std::string> command{program, "--scenario=checkpointed",
                                     "--dir=" + dir.path, "--lp_launch=local_mp"};
    auto with_state = [&](std::vector<std::string> words) {
      words.insert(words.begin(), {"/usr/bin/env", "XDG_STATE_HOME=" + state});
      return words;
    };
    auto first = ckpt::run_and_interrupt(with_state(command));
    auto saved = ckpt::after(first, "[lp] this launch's checkpoints are in ", ';');
    INFO(first);
    REQUIRE(saved.starts_with(home));  // a directory of this launch's own in there
    CHECK(std::filesystem::exists(saved + "/tally/0.ckpt"));
    auto resume_line = ckpt::after(first, "; to go on from them:\n[lp]   ");
    CHECK(resume_line == program + " --scenario=checkpointed --dir=" + dir.path +
                             " --lp_launch=local_mp --lp_resume=" + saved);
    // The run directory went with the launch: nothing of it stays in /tmp.
    auto secret = ckpt::after(first, "[lp] the launch's secret is in ");
    REQUIRE(secret.ends_with("/secret"));
    CHECK_FALSE(std::filesystem::exists(secret.substr(0, secret.size() - 7)));

    // The line it printed goes on from there, into a directory of its own.
    auto words = command;
    words.push_back("--lp_resume=" + saved);
    auto second = ckpt::run_and_interrupt(with_state(words));
    CHECK(second.find("[tally/0] [lp] tally/0 restored from " + saved +
                      "/tally/0.ckpt") != std::string::npos);
    auto next = ckpt::after(second, "[lp] this launch's checkpoints are in ", ';');
    CHECK(next.starts_with(home));
    CHECK(next != saved);
    CHECK(ckpt::after(second, "; to go on from them:\n[lp]   ") ==
          program + " --scenario=checkpointed --dir=" + dir.path +
              " --lp_launch=local_mp --lp_resume=" + next);

    // A launch that saved nothing leaves no directory behind.
    auto nothing = state + "/nothing";
    test_process::command failed({"/usr/bin/env", "XDG_STATE_HOME=" + nothing, program,
                                  "--scenario=checkpointed", "--graph_mistake=reserved"});
    CHECK(failed.exit_code(60s) == 1);
    CHECK(std::filesystem::is_empty(nothing + "/launchpad/checkpoints"));

    // Without XDG_STATE_HOME, under ~/.local/state; local_mt as local_mp.
    auto alone = ckpt::run_and_interrupt(
        {"/usr/bin/env", "-u", "XDG_STATE_HOME", "HOME=" + dir.path, program,
         "--scenario=checkpointed", "--lp_launch=local_mt"});
    CHECK(ckpt::after(alone, "[lp] this launch's checkpoints are in ", ';')
              .starts_with(dir.path +
                           "/.local/state/launchpad/checkpoints/scenario_checkpointed/"));
  }

  TEST_CASE("kill -9 in the middle of saving 32 MB: the checkpoint is always whole") {
    ckpt::scratch dir;
    lp::program p("scenario_ballast");
    scenarios::make(p, "ballast", dir.path);
    auto running =
        lp::launch<lp::test_multi_processing>(p, ckpt::options_for("ballast", dir));
    auto ballast = running.client(p.find<scenarios::Ballast>("ballast/0"));
    auto file = dir.path + "/checkpoints/ballast/0.ckpt";
    std::mt19937 random(14);
    double changes = 0;
    for (int kill = 0; kill < 8; ++kill) {
      CAPTURE(kill);
      REQUIRE(eventually(
          [&] {
            try {
              changes = static_cast<double>(ballast.change());
              return std::filesystem::exists(file);
            } catch (const lp::transport_error&) {
              return false;
            }
          },
          30s));
      std::this_thread::sleep_for(std::chrono::milliseconds(random() % 40));
      auto pids = running.pids();
      REQUIRE(pids.size() == 1);
      ::kill(pids[0], SIGKILL);
      REQUIRE(ckpt::gone(running, pids[0]));
      std::optional<std::vector<double>> state;
      CHECK_NOTHROW(state = ckpt::saved<std::vector<double>>(file, "Ballast"));
      REQUIRE(state);
      CHECK(state->size() == std::size_t{4} << 20);
      CHECK((*state)[0] <= changes + 0.5);
    }
    CHECK(running.stop());
  }

  TEST_CASE(
      "a damaged checkpoint, or another service's, is refused with a message naming it") {
    ckpt::scratch dir;
    auto file = dir.path + "/old/tally/0.ckpt";
    auto launch_with = [&](const std::string& what) {
      test_process::command launcher({ckpt::program_path(), "--scenario=checkpointed",
                                      "--dir=" + dir.path, "--lp_launch=local_mp",
                                      "--lp_checkpoint_dir=" + dir.path + "/new",
                                      "--lp_resume=" + dir.path + "/old"});
      auto status = launcher.exit_code(60s);
      auto output = launcher.output();
      INFO(output);
      CHECK(status == 1);
      CHECK(output.find(what) != std::string::npos);
      CHECK(output.find("[lp] node tally/0 failed") != std::string::npos);
    };
    std::string counter_state;
    lp::detail::cbor::write(counter_state, 5L);
    lp::detail::write_checkpoint(file, "Counter", counter_state);
    launch_with("[lp.checkpoint_error] the checkpoint " + file +
                " holds the state of a Counter, not of a Tally");
    lp::detail::write_checkpoint(file, "Tally", counter_state);
    {
      std::fstream damage(file, std::ios::in | std::ios::out | std::ios::binary);
      damage.seekp(-1, std::ios::end);
      damage.put('\x7f');
    }
    launch_with("[lp.checkpoint_error] the checkpoint " + file + " is damaged");
    // A checkpoint cut short (as a copy interrupted would leave it).
    std::filesystem::resize_file(file, 20);
    launch_with("[lp.checkpoint_error] the checkpoint " + file + " is damaged");
  }

  TEST_CASE("checkpoint files: a round trip, and what reading refuses") {
    ckpt::scratch dir;
    auto file = dir.path + "/a/b/c.ckpt";
    CHECK_FALSE(lp::detail::read_checkpoint(file, "S"));
    lp::detail::write_checkpoint(file, "S", std::string("\x00\x01state", 7));
    CHECK(lp::detail::read_checkpoint(file, "S") == std::string("\x00\x01state", 7));
    CHECK_FALSE(std::filesystem::exists(file + ".tmp"));
    CHECK_THROWS_WITH_AS(lp::detail::read_checkpoint(file, "T"),
                         doctest::Contains("holds the state of a S, not of a T"),
                         lp::checkpoint_error);
    std::ofstream(file) << "not a checkpoint";
    auto damaged = file + " is damaged";
    CHECK_THROWS_WITH_AS(lp::detail::read_checkpoint(file, "S"),
                         doctest::Contains(damaged.c_str()), lp::checkpoint_error);
  }
}
