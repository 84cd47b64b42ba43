#pragma once

// --lp_launch=kubernetes's own flags (docs/kubernetes.md): the --lp_kube_*
// rows, which read and check launch_settings::kube.

#include <launchpad/detail/cli/flag_row.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// A Kubernetes namespace: a DNS label (RFC 1123), as the API server demands.
inline std::string dns_label_value(std::string_view flag, std::string value) {
  bool fits =
      !value.empty() && value.size() <= 63 && value.front() != '-' && value.back() != '-';
  for (char c : value)
    fits = fits && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!fits)
    throw usage_error(
        std::string(flag) + "=" + one_line(flag, value) +
        ": give a DNS label: at most 63 lower-case letters, digits and '-', "
        "starting and ending with a letter or digit, e.g. " +
        std::string(flag) + "=research");
  return value;
}

// A container image reference (registry/repository:tag or @digest): the
// characters a reference can hold, so a typo shows here and not as a pod
// that never pulls.
inline std::string image_reference(std::string_view flag, std::string value) {
  bool fits = !value.empty() && value.size() <= 512;
  for (char c : value)
    fits = fits &&
           ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            std::string_view("._-/:@+").find(c) != std::string_view::npos);
  if (!fits)
    throw usage_error(std::string(flag) + "=" + one_line(flag, value) +
                      ": give an image reference, e.g. " + std::string(flag) +
                      "=registry.example.com/team/prog:1.0");
  return value;
}

inline constexpr flag_row kube_flag_rows[] = {
    {.name = "--lp_kube_image",
     .hint = "<image>",
     .example = "registry.example.com/team/prog:1.0",
     .help = "kubernetes: the container image every pod runs; it holds this program's "
             "binary (required)",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.kube.image = image_reference(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.kube.image}; }},
    {.name = "--lp_kube_namespace",
     .hint = "<ns>",
     .example = "research",
     .help = "kubernetes: the namespace of the launch's objects (default: default)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.kube.kube_namespace = dns_label_value(name, std::move(v));
         },
     .get = [](const launch_settings& s) -> flag_words {
       return {s.kube.kube_namespace};
     }},
    {.name = "--lp_kube_binary",
     .hint = "<path>",
     .example = "/opt/prog/bin/prog",
     .help = "kubernetes: where the program's binary is in the image (default: "
             "/usr/local/bin/ and the name of this binary)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           if (!v.starts_with("/"))
             throw usage_error(std::string(name) + "=" + one_line(name, v) +
                               ": give the binary's absolute path in the image, e.g. " +
                               std::string(name) + "=/usr/local/bin/prog");
           s.kube.binary = one_line(name, std::move(v));
         },
     .get = [](const launch_settings& s) -> flag_words { return {s.kube.binary}; }},
    {.name = "--lp_kube_dir",
     .hint = "<dir>",
     .example = "./manifests",
     .help =
         "kubernetes: where a dry run writes the launch's manifests, in a directory of "
         "their own (default: ./lp-kube)",
     .to_children = false,
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.kube.dir = one_line(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.kube.dir}; }},
};

}  // namespace lp::detail
