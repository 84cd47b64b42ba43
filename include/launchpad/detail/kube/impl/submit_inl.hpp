#pragma once

// submit.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/kube/submit.hpp>

namespace lp::detail {

LP_API int run_kube_manifests(const program& graph, const launch_settings& settings) {
  try {
    return kube::write_kube_launch(graph, settings, std::cout, std::cerr);
  } catch (const usage_error&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "[lp] the manifests could not be written: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace lp::detail
