#pragma once

// The launch policies that --lp_launch names, as types: lp::launch finds the
// place of its template argument here, at compile time, and the table of
// their launchers (detail/launchers.hpp) is made from the same list.

#include <cstddef>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <type_traits>

namespace lp::detail {

template <class... Policies>
struct policy_list {};

// The launcher of a launch policy P (lp::slurm, ...): how it runs a program
// (`run(graph, transport, settings)`, settings/launch_settings.hpp), and
// whether it has a dry run and runs on this host. Each is specialized in
// the folder of the layer it belongs to (slurm/launcher.hpp, ...);
// detail/launchers.hpp lists them.
template <class P>
struct launcher;
using named_policies = policy_list<test_multi_threading, local_multi_threading,
                                   local_multi_processing, slurm, kubernetes>;

// The place in `list` of Policy, or of the policy it is made from
// (direct_calls<P>); the list's length if neither is in it.
template <class Policy, class... Named>
constexpr std::size_t place_in(policy_list<Named...>) {
  std::size_t place = 0;
  (void)((std::is_base_of_v<Named, Policy> || (++place, false)) || ...);
  return place;
}
template <class... Named>
constexpr std::size_t length(policy_list<Named...>) {
  return sizeof...(Named);
}

}  // namespace lp::detail
