#pragma once

// A node's log file, as its launcher quotes it: under a failure in the
// summary, and on the status page.

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <launchpad/detail/os/output.hpp>
#include <launchpad/detail/util/text.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// The last lines of the log at `path` (labelled_lines::kept of them, a last
// one without its newline too), oldest first; none if it cannot be read.
// Read from its end: a long log is not read whole.
inline std::vector<std::string> log_tail(const std::string& path) {
  constexpr std::size_t wanted = labelled_lines::kept;
  constexpr std::size_t step = 8192;
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return {};
  auto end = static_cast<std::streamoff>(file.tellg());
  if (end <= 0) return {};
  auto from = static_cast<std::size_t>(end);
  std::string tail;
  auto complete_lines = [&] {
    auto breaks = static_cast<std::size_t>(std::count(tail.begin(), tail.end(), '\n'));
    return tail.ends_with('\n') ? breaks - 1 : breaks;
  };
  while (from > 0 && complete_lines() < wanted) {
    auto size = std::min(from, step);
    from -= size;
    std::string chunk(size, '\0');
    file.seekg(static_cast<std::streamoff>(from));
    if (!file.read(chunk.data(), static_cast<std::streamsize>(size))) return {};
    tail.insert(0, chunk);
  }
  std::string_view text = tail;
  if (text.ends_with('\n')) text.remove_suffix(1);
  auto lines = split(text, '\n');
  // Read from the middle of the log, the first line is a part of one.
  std::size_t first = from > 0 ? 1 : 0;
  if (lines.size() > wanted) first = std::max(first, lines.size() - wanted);
  return {lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end()};
}

}  // namespace lp::detail
