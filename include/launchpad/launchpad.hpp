#pragma once

/// @file
/// Launchpad for C++: write services as plain structs, wire them into a
/// program graph, launch it as threads or as processes. This header brings
/// every public header but json.hpp, cacher.hpp and replay.hpp, which a
/// program includes on its own. See README.md and docs/.

#include <launchpad/client.hpp>
#include <launchpad/context.hpp>
#include <launchpad/error.hpp>
#include <launchpad/handle.hpp>
#include <launchpad/launch.hpp>
#include <launchpad/metrics.hpp>
#include <launchpad/program.hpp>
#include <launchpad/python.hpp>
#include <launchpad/service.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/version.hpp>
#include <launchpad/wire.hpp>

/// @namespace lp
/// Every public name of the library. lp::detail holds its internals, which
/// may change in any release.
