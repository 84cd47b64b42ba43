#pragma once

// The launch policies that a command line can name (--lp_launch), each with
// its launcher (detail/cli/flags.hpp, `launcher`), which its own folder
// declares with its own flags: one table, from a name to a type. Here the
// command line is read, once, into the flags every launch shares and each
// launcher's options; --lp_help lists them all. The compiled part's
// launch_main (impl/launch_inl.hpp) dispatches through it, and includes the
// headers that define the launchers' runs.

#include <cstddef>
#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/detail/host/local_launchers.hpp>
#include <launchpad/detail/kube/options.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/slurm/options.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::detail {

template <class... Policies>
struct policy_table {
  // Each policy's launcher's options, in the table's order.
  using options = std::tuple<typename launcher<Policies>::options...>;

  // Calls `f(std::type_identity<P>{}, index)` for the policy P that `name`
  // names (P::flag), whose options are std::get<index>(options); false if
  // none does.
  template <class F>
  static bool with_policy(std::string_view name, F&& f) {
    return with_policy(name, f, std::index_sequence_for<Policies...>{});
  }

  // "a, b or c": the names, for a message.
  static std::string names() {
    std::string listed;
    std::size_t left = sizeof...(Policies);
    ((listed += std::string(Policies::flag) + (--left > 1  ? ", "
                                               : left == 1 ? " or "
                                                           : "")),
     ...);
    return listed;
  }

  // Every flag a command line may hold: the shared ones, then each
  // launcher's.
  struct help {
    template <class Put>
    static constexpr void write(Put put) {
      write_help(put, flag_table<launch_flags>(flag_rows),
                 launcher<Policies>::flag_rows...,
                 flag_table<launch_flags>(closing_flag_rows));
    }
  };
  static constexpr bool tables_are_sound() {
    return flag_tables_are_sound(flag_table<launch_flags>(flag_rows),
                                 launcher<Policies>::flag_rows...,
                                 flag_table<launch_flags>(closing_flag_rows));
  }

  // Reads argv's --lp_ words, each into the table that names it.
  static void read(int argc, char** argv, launch_flags& flags, options& own) {
    std::apply(
        [&](auto&... each) {
          read_flags(argc, argv, false, flag_target<launch_flags>{flag_rows, flags},
                     flag_target<typename launcher<Policies>::options>{
                         launcher<Policies>::flag_rows, each}...,
                     flag_target<launch_flags>{closing_flag_rows, flags});
        },
        own);
  }

 private:
  template <class F, std::size_t... I>
  static bool with_policy(std::string_view name, F& f, std::index_sequence<I...>) {
    return ((name == Policies::flag &&
             (f(std::type_identity<Policies>{}, std::integral_constant<std::size_t, I>{}),
              true)) ||
            ...);
  }
};

// The policies --lp_launch names. test_multi_processing is not among them:
// only a test's lp::controller starts it.
using launch_policies = policy_table<test_multi_threading, local_multi_threading,
                                     local_multi_processing, slurm, kubernetes>;

static_assert(launch_policies::tables_are_sound(),
              "each flag row: one --lp_ name, in no other row of any table, a help "
              "text, and a hint and an example unless it is a switch");

inline constexpr std::string_view flags_help = help_text<launch_policies::help>;
static_assert(longest_line(flags_help) <= help_width,
              "a --lp_help line is wider than 80 columns: shorten a word or a name");

// A command line, read: the flags every launch shares, and each launcher's
// options.
struct command_line {
  launch_flags flags;
  launch_policies::options options;
};

// Reads every --lp_ flag of argv, each checked by its row alone; a flag of a
// policy other than the one chosen is read and checked too (a node process
// gets its launcher's whole command line).
inline command_line read_each_flag(int argc, char** argv) {
  command_line line;
  for (int i = 0; i < argc; ++i) line.flags.arguments.emplace_back(argv[i]);
  launch_policies::read(argc, argv, line.flags, line.options);
  return line;
}

// The command line as lp::launch reads it: each flag, then the TLS flags
// together.
inline command_line read_command_line(int argc, char** argv) {
  auto line = read_each_flag(argc, argv);
  check_tls_flags(line.flags.tls);
  return line;
}

}  // namespace lp::detail
