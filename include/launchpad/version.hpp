#pragma once

/// @file
/// The library's version, as macros for the preprocessor and as lp::version.
/// Versions follow Semantic Versioning (CHANGELOG.md).

// The version is written once, in detail/protocol/protocol.toml, which
// meson.build, CMakeLists.txt and the Python package read too.
#include <launchpad/detail/protocol/constants.hpp>

/// The major version: it grows with a change that breaks code written for
/// the last one.
#define LP_VERSION_MAJOR LP_DETAIL_VERSION_MAJOR
/// The minor version: it grows with what is added without breaking code.
#define LP_VERSION_MINOR LP_DETAIL_VERSION_MINOR
/// The patch version: it grows with fixes.
#define LP_VERSION_PATCH LP_DETAIL_VERSION_PATCH

#define LP_DETAIL_STRINGIZE2(x) #x
#define LP_DETAIL_STRINGIZE(x) LP_DETAIL_STRINGIZE2(x)
/// The version as text, such as "0.1.0".
#define LP_VERSION_STRING               \
  LP_DETAIL_STRINGIZE(LP_VERSION_MAJOR) \
  "." LP_DETAIL_STRINGIZE(LP_VERSION_MINOR) "." LP_DETAIL_STRINGIZE(LP_VERSION_PATCH)

namespace lp {
/// A version's parts and its text, as lp::version holds the library's.
struct version_info {
  int major;           ///< LP_VERSION_MAJOR
  int minor;           ///< LP_VERSION_MINOR
  int patch;           ///< LP_VERSION_PATCH
  const char* string;  ///< LP_VERSION_STRING, such as "0.1.0"
};
/// The version of the headers this file was compiled with; LP_VERSION_MAJOR
/// and the others for `#if`.
///
/// ```cpp
/// std::cout << "launchpad " << lp::version.string << '\n';
/// ```
inline constexpr version_info version{LP_VERSION_MAJOR, LP_VERSION_MINOR,
                                      LP_VERSION_PATCH, LP_VERSION_STRING};
}  // namespace lp
