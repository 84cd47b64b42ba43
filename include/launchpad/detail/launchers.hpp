#pragma once

// The launch policies that a command line can name (--lp_launch), each with
// its launcher (detail/named_policies.hpp, `launcher`), which its own folder
// declares: one table, from a policy to what runs it. The compiled part's
// launch_main (impl/launch_inl.hpp) reads the command line into
// launch_settings (cli/command_line.hpp) and dispatches through the table,
// and includes the headers that define the launchers' runs.

#include <array>
#include <cstddef>
#include <launchpad/detail/host/local_launchers.hpp>
#include <launchpad/detail/kube/launcher.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/process/local_mp_launcher.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/slurm/launcher.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/program.hpp>
#include <utility>

namespace lp::detail {

template <class List>
struct policy_table;
template <class... Policies>
struct policy_table<policy_list<Policies...>> {
  using run_fn = int (*)(const program&, transport_kind, const launch_settings&);

  // A policy of the table, as its kind finds it.
  struct entry {
    policy_kind kind;
    bool dry_run;  // launcher<P>::dry_run
    run_fn run;    // launcher<P>::run, through run_on_this_host if on_this_host
    // launcher<P>::run_node: a node process that launcher<P> started, where
    // it says; nullptr if it says nothing (run_node_process's defaults).
    run_fn node;
  };

  // The entry of the policy at `place` in the list.
  static const entry& at(std::size_t place) { return entries[place]; }

  // The entry of the policy `kind`; nullptr if it is none of the table's.
  static const entry* find(policy_kind kind) {
    for (const auto& e : entries)
      if (e.kind == kind) return &e;
    return nullptr;
  }

 private:
  template <class P>
  static int run(const program& graph, transport_kind transport,
                 const launch_settings& settings) {
    if constexpr (launcher<P>::on_this_host)
      return run_on_this_host(graph, transport, settings, &launcher<P>::run);
    else
      return launcher<P>::run(graph, transport, settings);
  }

  template <class P>
  static constexpr run_fn node_of() {
    if constexpr (requires { &launcher<P>::run_node; })
      return &launcher<P>::run_node;
    else
      return nullptr;
  }

  static constexpr std::array<entry, sizeof...(Policies)> entries{
      entry{*policy_named(Policies::flag), launcher<Policies>::dry_run, &run<Policies>,
            node_of<Policies>()}...};
};

// The policies --lp_launch names (named_policies). test_multi_processing is
// not among them: only a test's lp::controller starts it.
using launch_policies = policy_table<named_policies>;

}  // namespace lp::detail
