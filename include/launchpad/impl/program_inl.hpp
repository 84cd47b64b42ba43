#pragma once

// program.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/program.hpp>

namespace lp {

namespace detail {
LP_API void end_graph_errors_cleanly() {
  static const std::terminate_handler previous = std::set_terminate([] {
    try {
      if (auto escaped = std::current_exception()) std::rethrow_exception(escaped);
    } catch (const graph_error& e) {
      std::fflush(stdout);  // what main() printed before, as an exit would
      std::fprintf(stderr, "[lp] the program could not start: %s\n", e.what());
      std::_Exit(1);
    } catch (...) {
    }
    if (previous) previous();
    std::abort();
  });
}

LP_API void check_name(std::string_view name, std::string_view what) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
  };
  if (name.empty()) throw graph_error(std::string(what) + " must not be empty");
  for (char c : name)
    if (!allowed(c))
      throw graph_error(std::string(what) + " '" + std::string(name) +
                        "' may hold only letters, digits, '_', '-' and '.'");
}
}  // namespace detail

LP_API node_info program::described(std::string label, std::string group, int index,
                                    std::string_view service, bool has_run,
                                    bool checkpointed) {
  node_info spec;
  spec.label = std::move(label);
  spec.group = std::move(group);
  spec.index = index;
  spec.service = std::string(service);
  spec.has_run = has_run;
  spec.checkpointed = checkpointed;
  return spec;
}

LP_API void program::check_free(const std::string& label) const {
  if (taken(label))
    throw graph_error("program '" + name_ + "' already has a node or group named '" +
                      label + "'; labels must be unique");
}

LP_API void program::append(node_info spec, recipe made) {
  nodes_.push_back(std::move(spec));
  builders_.push_back(std::move(made.builder));
  pythons_.push_back(std::move(made.python));
  executables_.push_back(std::move(made.executable));
}

LP_API void program::connect(node_info& spec, const std::string& target,
                             const program* owner) const {
  if (!owner)
    throw graph_error(
        "node '" + spec.label +
        "' was given an empty lp::handle (default-constructed, naming no node); "
        "give it the handle add_node returned");
  if (owner != this)
    throw graph_error(
        "node '" + spec.label + "' was given a handle to '" + target +
        "' from another program; handles work only in the program that made them");
  spec.edges.push_back(target);
}

}  // namespace lp
