#pragma once

// program --lp_status=RUN_DIR [--lp_json]: what the status page shows, for a
// shell or a script. Asks the launch's status page (its URL and the secret
// are in the run directory) and prints a table of the nodes, or the JSON.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/status/status_server.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/error.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

namespace lp::detail {

// Returns the exit status: 0, or 1 if the launch cannot be asked.
LP_API int print_status(const std::string& run_dir, bool as_json, std::ostream& out);

}  // namespace lp::detail
