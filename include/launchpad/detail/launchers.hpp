#pragma once

// The launch policies that a command line can name (--lp_launch), each with
// its launcher (detail/cli/flags.hpp, `launcher`), which its own folder
// declares with its own flags: one table, from a name to a type, whose
// command_line detail/cli/flags.hpp reads, once, into the flags every launch
// shares and each launcher's options; --lp_help lists them all. The compiled
// part's launch_main (impl/launch_inl.hpp) reads the command line and
// dispatches through the table, and includes the headers that define the
// launchers' runs.

#include <array>
#include <cstddef>
#include <launchpad/detail/cli/flags.hpp>
#include <launchpad/detail/host/local_launchers.hpp>
#include <launchpad/detail/kube/options.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/slurm/options.hpp>
#include <launchpad/detail/util/text.hpp>
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

template <class List>
struct policy_table;
template <class... Policies>
struct policy_table<policy_list<Policies...>> {
  // A command line, read (read_command_line, below): the
  // shared flags, and each policy's launcher's options, in the table's order.
  using line = command_line_of<Policies...>;
  using options = launchers_options<Policies...>;

  // A policy of the table, as its name finds it.
  struct entry {
    std::string_view name;  // P::flag
    bool dry_run;           // launcher<P>::dry_run
    // launcher<P>::run, with its options out of `options`.
    int (*run)(const program&, transport_kind, const launch_flags&, const options&);
    // launcher<P>::run_node: a node process that launcher<P> started, where
    // it says; nullptr if it says nothing (run_node_process's defaults).
    int (*node)(const program&, transport_kind, const launch_flags&, const options&);
  };

  // The entry of the policy at `place` in the list.
  static const entry& at(std::size_t place) { return entries[place]; }

  // The entry of the policy `name` names; nullptr if none does.
  static const entry* find(std::string_view name) {
    for (const auto& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  }

  // "a, b or c": the names, for a message.
  static std::string names() {
    return choices_text(
        std::array<std::string_view, sizeof...(Policies)>{Policies::flag...});
  }

  // The --lp_help text: every flag a command line may hold, the shared
  // ones, then each launcher's, then the closing ones.
  static std::string help() {
    return help_text(flag_table<launch_flags>(flag_rows),
                     launcher<Policies>::flag_rows...,
                     flag_table<launch_flags>(closing_flag_rows));
  }
  static constexpr bool tables_are_sound() {
    return flag_tables_are_sound(flag_table<launch_flags>(flag_rows),
                                 launcher<Policies>::flag_rows...,
                                 flag_table<launch_flags>(closing_flag_rows));
  }

 private:
  template <class P, std::size_t I>
  static int run(const program& graph, transport_kind transport,
                 const launch_flags& flags, const options& own) {
    if constexpr (launcher<P>::on_this_host)
      return run_on_this_host(graph, transport, flags, &launcher<P>::run);
    else
      return launcher<P>::run(graph, transport, flags, slot<I>(own));
  }

  template <class P, std::size_t I>
  static int node(const program& graph, transport_kind transport,
                  const launch_flags& flags, const options& own) {
    return launcher<P>::run_node(graph, transport, flags, slot<I>(own));
  }
  template <class P, std::size_t I>
  static constexpr auto node_of() {
    using run_node =
        int (*)(const program&, transport_kind, const launch_flags&, const options&);
    if constexpr (requires { &launcher<P>::run_node; })
      return run_node{&node<P, I>};
    else
      return run_node{nullptr};
  }

  template <std::size_t... I>
  static constexpr std::array<entry, sizeof...(Policies)> make_entries(
      std::index_sequence<I...>) {
    return {entry{Policies::flag, launcher<Policies>::dry_run, &run<Policies, I>,
                  node_of<Policies, I>()}...};
  }
  static constexpr auto entries = make_entries(std::index_sequence_for<Policies...>{});
};

// The policies --lp_launch names (launch.hpp's named_policies).
// test_multi_processing is not among them: only a test's lp::controller
// starts it.
using launch_policies = policy_table<named_policies>;

// A command line, read: the flags every launch shares, and each launcher's
// options.
using command_line = launch_policies::line;

// The command line as lp::launch reads it: each flag, then the TLS flags
// together (a test may leave those out: each flag checked by its row alone).
inline command_line read_command_line(int argc, char** argv, read_checks checks = {}) {
  command_line line;
  read_tables(argc, argv, line, checks);
  return line;
}

}  // namespace lp::detail
