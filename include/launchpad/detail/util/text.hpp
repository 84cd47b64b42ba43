#pragma once

// Lists in text: a flag's "0,1,3", a header's "close, TE", the rows and
// fields that Slurm's commands print, the choices a message names.

#include <cctype>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// The parts of `text` between `separator`s, empty ones too: "a,,b" has "a",
// "" and "b"; "" has one empty part. Views into `text`, which must outlive
// them.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start <= text.size();) {
    auto at = text.find(separator, start);
    if (at == std::string_view::npos) at = text.size();
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  return parts;
}

// "a, b or c": `words` as a message lists the choices among them.
template <class Words>
std::string choices_text(const Words& words) {
  std::string listed;
  std::size_t left = std::size(words);
  for (std::string_view word : words) {
    listed += word;
    --left;
    listed += left > 1 ? ", " : left == 1 ? " or " : "";
  }
  return listed;
}

// `text` without the white space around it; a view into it.
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  return text;
}

}  // namespace lp::detail
