// Every public header, in reverse order: metrics.hpp before program.hpp,
// launch.hpp after the headers it includes. Built zero-configuration and
// linked (tests/meson.build): the compiled part, which launch.hpp brings,
// is whole whichever headers came before it.
#include <launchpad/cacher.hpp>
#include <launchpad/client.hpp>
#include <launchpad/context.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/json.hpp>
#include <launchpad/launch.hpp>
#include <launchpad/launch/controller.hpp>
#include <launchpad/launch/kubernetes.hpp>
#include <launchpad/launch/local_multi_processing.hpp>
#include <launchpad/launch/local_multi_threading.hpp>
#include <launchpad/launch/policy.hpp>
#include <launchpad/launch/slurm.hpp>
#include <launchpad/launch/test_multi_processing.hpp>
#include <launchpad/launch/test_multi_threading.hpp>
#include <launchpad/metrics.hpp>
#include <launchpad/program.hpp>
#include <launchpad/python.hpp>
#include <launchpad/replay.hpp>
#include <launchpad/service.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/version.hpp>
#include <launchpad/wire.hpp>

// Definitions of the headers included before launch.hpp: the link needs them.
void record_and_stop() {
  lp::metrics::counter("records").add(1);
  lp::stop();
}

int main(int argc, char** argv) {
  lp::program p("include_order");
  return lp::launch(p, argc, argv);
}
