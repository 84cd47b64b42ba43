// launch.hpp first, before the public headers whose definitions its compiled
// part brings: the others then add nothing but what they declare.
#include <launchpad/launch.hpp>

#include <launchpad/cacher.hpp>
#include <launchpad/client.hpp>
#include <launchpad/context.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/json.hpp>
#include <launchpad/launchpad.hpp>
#include <launchpad/metrics.hpp>
#include <launchpad/program.hpp>
#include <launchpad/python.hpp>
#include <launchpad/replay.hpp>
#include <launchpad/service.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/version.hpp>
#include <launchpad/wire.hpp>

// A second file of the same program: its inline definitions are the same.
double records_so_far() {
  return lp::metrics::counter("records").value();
}
