#pragma once

/// @file
/// lp::launch, which runs a program under a launch policy, and every policy
/// (docs/launching.md).
///
/// ```cpp
/// return lp::launch(p, argc, argv);                        // --lp_launch=... or local_mt
/// return lp::launch<lp::local_multi_processing>(p, argc, argv);
/// return lp::launch<lp::slurm>(p, argc, argv);              // one Slurm job
/// return lp::launch<lp::kubernetes>(p, argc, argv);         // Jobs on Kubernetes
/// auto running = lp::launch<lp::test_multi_threading>(p);  // in a test
/// auto running = lp::launch<lp::test_multi_processing>(p, {.executable = path});
/// auto fast = lp::launch<lp::direct_calls<lp::test_multi_threading>>(p);
/// ```
///
/// This header brings the library's compiled part, inline, into every file
/// that includes it (launchpad.hpp does), unless the build defines
/// LP_SEPARATE_COMPILATION: dependency('launchpad') does, and compiles it
/// once; with the single header, one file of the program also defines
/// LP_IMPLEMENTATION (docs/getting-started.md, "Build").

#include <cstddef>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/program.hpp>
#include <type_traits>

namespace lp {

namespace detail {
// Runs the program under the launcher of --lp_launch's policy, else of the
// one at `policy` in named_policies.
LP_API int launch_main(const program& graph, int argc, char** argv, std::size_t policy,
                       transport_kind transport);

// A policy's controller and options, or stand-ins for a policy that has
// none, so that launch's own message is the only error the user reads.
struct no_test_options {};
struct no_controller {
  template <class... A>
  explicit no_controller(A&&...) {}
};
template <class P>
struct test_parts {
  using options = no_test_options;
  using controller = no_controller;
};
template <class P>
requires requires {
  typename P::controller;
  typename P::options;
}
struct test_parts<P> {
  using options = typename P::options;
  using controller = typename P::controller;
};
}  // namespace detail

/// Runs the program from main(), to its end, and returns its exit status.
///
/// ```cpp
/// int main(int argc, char** argv) {
///   lp::program p("counter");
///   ...
///   return lp::launch<lp::local_multi_processing>(p, argc, argv);
/// }
/// ```
///
/// It reads the `--lp_` flags (`--lp_help` lists them) and leaves the other
/// arguments to the program; it removes nothing from argv. The policy named
/// as the template argument is the default: `--lp_launch` chooses among
/// the others, so one binary runs every way. Every process of a launch runs
/// main() again, builds the same graph and runs only its own nodes.
///
/// @tparam Policy lp::local_multi_threading, lp::local_multi_processing,
/// lp::slurm, lp::kubernetes or lp::test_multi_threading, or one of them as
/// lp::direct_calls; anything else is a compile error that says what to
/// write
/// @param graph the program; it must outlive the call
/// @param argc, argv main()'s
/// @return 0 when the program stopped cleanly (also for `--lp_help`), 1 when
/// a node failed or the program could not start (a mistake in the graph
/// too, also one thrown before launch), 2 for a mistake on the command line
/// (an unknown `--lp_` flag, a `--lp_resume` directory with no checkpoint of
/// this program); docs/launching.md, "Exit statuses"
template <class Policy = local_multi_threading>
int launch(const program& graph, int argc, char** argv) {
  static_assert(launch_policy<Policy>,
                "lp::launch<P>(p, argc, argv): P is not a launch policy; use "
                "lp::local_multi_threading, lp::local_multi_processing, lp::slurm, "
                "lp::kubernetes or "
                "lp::test_multi_threading (optionally as lp::direct_calls<P>)");
  if constexpr (launch_policy<Policy>) {
    static_assert(
        Policy::from_command_line,
        "lp::launch<P>(p, argc, argv): this policy runs only under a test, as "
        "lp::launch<P>(p, options), which returns its controller; from main(), use "
        "lp::local_multi_processing");
    constexpr auto place = detail::place_in<Policy>(detail::named_policies{});
    static_assert(
        !Policy::from_command_line || place < detail::length(detail::named_policies{}),
        "lp::launch<P>(p, argc, argv): P is none of the policies that "
        "--lp_launch names; use lp::local_multi_threading, "
        "lp::local_multi_processing, lp::slurm or lp::kubernetes");
    return detail::launch_main(graph, argc, argv, place, Policy::transport::kind);
  } else {
    return 2;
  }
}

/// Launches the program under a test and returns its controller, which
/// stops the program when it goes.
///
/// ```cpp
/// auto running = lp::launch<lp::test_multi_threading>(p);
/// CHECK(running.client(counter).add(1) == 1);
/// running.stop();
/// ```
///
/// Under lp::test_multi_threading it returns once every node serves and
/// every run() has started; under lp::test_multi_processing, once the node
/// processes are started, and a client's calls wait for a node that does
/// not serve yet.
/// @tparam Policy lp::test_multi_threading or lp::test_multi_processing, or
/// one of them as lp::direct_calls; anything else is a compile error that
/// says what to write
/// @param graph the program; it must outlive the controller
/// @param options lp::test_options or lp::process_test_options, as the policy
/// takes them
/// @throws lp::graph_error for a graph no launch runs (a node reserved and
/// never defined)
/// @throws lp::usage_error for options the nodes would refuse (an unknown
/// `--lp_` flag among lp::process_test_options::arguments)
/// @throws lp::launch_error, or a subclass, when the launch cannot start
template <class Policy>
typename detail::test_parts<Policy>::controller launch(
    const program& graph,
    const typename detail::test_parts<Policy>::options& options = {}) {
  using parts = detail::test_parts<Policy>;
  static_assert(
      !std::is_same_v<typename parts::controller, detail::no_controller>,
      "lp::launch<P>(p, options): P is not a policy for tests; a test launches "
      "lp::test_multi_threading or lp::test_multi_processing (optionally as "
      "lp::direct_calls<P>); a program's main() calls lp::launch<P>(p, argc, argv)");
  if constexpr (launch_policy<Policy>)
    return typename parts::controller(graph, options, Policy::transport::kind);
  else
    return typename parts::controller(graph);
}

}  // namespace lp

// The library's compiled part, wherever detail/config.hpp says it is defined
// (inline by default): the one place that decides. A program that launches
// includes this header, so its definitions come with it; they bring in every
// header they need, whichever a file included before.
#if LP_DETAIL_DEFINE_COMPILED_PART
#include <launchpad/detail/implementation.hpp>
#endif
