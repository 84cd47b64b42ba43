#pragma once

// context.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/context.hpp>

namespace lp {

LP_API void stop() {
  if (auto* launch = detail::this_thread_node().launch) {
    launch->request_stop();
    return;
  }
  for (auto& launch : detail::launch_registry::get().all()) launch->request_stop();
}

}  // namespace lp
