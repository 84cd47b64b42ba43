#pragma once

// The one place the version is written; meson.build reads these three lines.
#define LP_VERSION_MAJOR 0
#define LP_VERSION_MINOR 1
#define LP_VERSION_PATCH 0

#define LP_DETAIL_STRINGIZE2(x) #x
#define LP_DETAIL_STRINGIZE(x) LP_DETAIL_STRINGIZE2(x)
#define LP_VERSION_STRING               \
  LP_DETAIL_STRINGIZE(LP_VERSION_MAJOR) \
  "." LP_DETAIL_STRINGIZE(LP_VERSION_MINOR) "." LP_DETAIL_STRINGIZE(LP_VERSION_PATCH)

namespace lp {
struct version_info {
  int major, minor, patch;
  const char* string;
};
inline constexpr version_info version{LP_VERSION_MAJOR, LP_VERSION_MINOR,
                                      LP_VERSION_PATCH, LP_VERSION_STRING};
}  // namespace lp
