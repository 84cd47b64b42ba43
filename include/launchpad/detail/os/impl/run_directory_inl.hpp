#pragma once

// run_directory.hpp's share of the library's compiled part: the definitions
// that detail/implementation.hpp gathers (detail/config.hpp says where they
// are compiled).

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <launchpad/detail/os/run_directory.hpp>
#include <string>
#include <vector>

namespace lp::detail {

LP_API void run_directory::clear(const std::string& path) {
  std::vector<std::string> entries;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (const auto* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != ".." && name != logs_dir)
        entries.push_back(path + "/" + name);
    }
    ::closedir(dir);
  }
  // Depth first, without following links: a folder's files, then it.
  auto remove_one = [](const char* file, const struct stat*, int, FTW*) {
    ::remove(file);
    return 0;
  };
  for (const auto& entry : entries)
    ::nftw(entry.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
  ::rmdir(logs_in(path).c_str());  // fails, as it should, while logs are in it
  ::rmdir(path.c_str());
}

LP_API void run_directory::clear_sockets(const std::string& path) {
  std::vector<std::string> sockets;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (const auto* entry = ::readdir(dir)) {
      auto file = path + "/" + entry->d_name;
      struct stat about {};
      if (::lstat(file.c_str(), &about) == 0 && S_ISSOCK(about.st_mode))
        sockets.push_back(file);
    }
    ::closedir(dir);
  }
  for (const auto& socket : sockets) ::unlink(socket.c_str());
  ::rmdir(path.c_str());
}

}  // namespace lp::detail
