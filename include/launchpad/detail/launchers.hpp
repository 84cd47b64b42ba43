#pragma once

// The launch policies that a command line can name (--lp_launch), each with
// its launcher (detail/cli/flags.hpp, `launcher`), which its own folder
// declares with its own flags: one table, from a name to a type. Here the
// command line is read, once, into the flags every launch shares and each
// launcher's options; --lp_help lists them all. The compiled part's
// launch_main (impl/launch_inl.hpp) dispatches through it, and includes the
// headers that define the launchers' runs.

#include <array>
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
#include <launchpad/program.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// The options of the launcher of the I-th policy of a table (a plain
// holder: std::tuple's constructors cost a user's file more to compile).
template <std::size_t I, class Options>
struct options_slot {
  Options value;
};

template <class Indices, class... Policies>
struct options_of_policies;
template <std::size_t... I, class... Policies>
struct options_of_policies<std::index_sequence<I...>, Policies...>
    : options_slot<I, typename launcher<Policies>::options>... {};

template <std::size_t I, class Options>
Options& slot(options_slot<I, Options>& s) {
  return s.value;
}
template <std::size_t I, class Options>
const Options& slot(const options_slot<I, Options>& s) {
  return s.value;
}

// The options of type Options, of the one launcher that has them.
template <class Options, std::size_t I>
Options& options_of(options_slot<I, Options>& s) {
  return s.value;
}
template <class Options, std::size_t I>
const Options& options_of(const options_slot<I, Options>& s) {
  return s.value;
}

template <class... Policies>
struct policy_table {
  // Each policy's launcher's options, in the table's order: slot<I>(options)
  // is the I-th's.
  using options = options_of_policies<std::index_sequence_for<Policies...>, Policies...>;

  // A policy of the table, as its name finds it.
  struct entry {
    std::string_view name;  // P::flag
    bool dry_run;           // launcher<P>::dry_run
    // launcher<P>::run, with its options out of `options`.
    int (*run)(const program&, transport_kind, const launch_flags&, const options&);
    // Where a node process that launcher<P> started runs, if the launcher
    // says (node_site_of); else false, and `site` stays as it is.
    bool (*site)(const options&, node_site& site);
  };

  // The entry of the policy `name` names; nullptr if none does.
  static const entry* find(std::string_view name) {
    for (const auto& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  }

  // "a, b or c": the names, for a message.
  static std::string names() {
    std::string listed;
    std::size_t left = std::size(entries);
    for (const auto& e : entries) {
      listed += e.name;
      --left;
      listed += left > 1 ? ", " : left == 1 ? " or " : "";
    }
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
    read(argc, argv, flags, own, std::index_sequence_for<Policies...>{});
  }

 private:
  template <std::size_t... I>
  static void read(int argc, char** argv, launch_flags& flags, options& own,
                   std::index_sequence<I...>) {
    read_flags(argc, argv, false, flag_target<launch_flags>{flag_rows, flags},
               flag_target<typename launcher<Policies>::options>{
                   launcher<Policies>::flag_rows, slot<I>(own)}...,
               flag_target<launch_flags>{closing_flag_rows, flags});
  }

  template <class P, std::size_t I>
  static int run(const program& graph, transport_kind transport,
                 const launch_flags& flags, const options& own) {
    return launcher<P>::run(graph, transport, flags, slot<I>(own));
  }

  template <class P, std::size_t I>
  static bool site(const options& own, node_site& where) {
    if constexpr (requires { launcher<P>::node_site_of(slot<I>(own)); }) {
      where = launcher<P>::node_site_of(slot<I>(own));
      return true;
    } else {
      return false;
    }
  }

  template <std::size_t... I>
  static constexpr std::array<entry, sizeof...(Policies)> make_entries(
      std::index_sequence<I...>) {
    return {entry{Policies::flag, launcher<Policies>::dry_run, &run<Policies, I>,
                  &site<Policies, I>}...};
  }
  static constexpr auto entries = make_entries(std::index_sequence_for<Policies...>{});
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
