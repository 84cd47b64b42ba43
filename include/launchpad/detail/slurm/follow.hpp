#pragma once

// The submitting command shows what the job writes: the supervisor's log
// as it is, each node's log behind "[label] ", as local_mp shows them.

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace lp::detail {

class log_follower {
 public:
  void follow(std::string path, std::string prefix, std::ostream& out) {
    files_.push_back({std::move(path), std::move(prefix), &out, 0, {}});
  }

  // Prints the lines written since the last call; at the end, also what
  // is left of unfinished lines.
  void poll(bool at_end = false) {
    for (auto& f : files_) {
      std::ifstream in(f.path, std::ios::binary);
      if (!in) continue;
      in.seekg(0, std::ios::end);
      auto size = static_cast<std::size_t>(in.tellg());
      if (size <= f.offset) continue;
      in.seekg(static_cast<std::streamoff>(f.offset));
      std::string chunk(size - f.offset, '\0');
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      f.offset += static_cast<std::size_t>(in.gcount());
      f.partial.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
      std::size_t start = 0;
      for (auto newline = f.partial.find('\n'); newline != std::string::npos;
           newline = f.partial.find('\n', start)) {
        *f.out << f.prefix << f.partial.substr(start, newline - start) << "\n";
        start = newline + 1;
      }
      f.partial.erase(0, start);
    }
    for (auto& f : files_) {
      if (at_end && !f.partial.empty()) *f.out << f.prefix << f.partial << "\n";
      if (at_end) f.partial.clear();
      f.out->flush();
    }
  }

 private:
  struct file {
    std::string path, prefix;
    std::ostream* out;
    std::size_t offset;
    std::string partial;
  };
  std::vector<file> files_;
};

}  // namespace lp::detail
