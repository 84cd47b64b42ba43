#pragma once

// Launchpad for C++: write services as plain structs, wire them into a
// program graph, launch it as threads or as processes.
// See README.md and docs/.

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
