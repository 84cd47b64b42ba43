#pragma once
// The user types both fuzz targets read: the dispatcher as arguments, the
// client as results.
#include <boost/hana/define_struct.hpp>
#include <launchpad/json.hpp>
#include <launchpad/wire.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fz {

// A user struct with nlohmann's own conversions. Its members convert by
// nlohmann's rules, which cast a float to an int without a range check, so
// it holds no integer here (docs/protocol.md says so to users).
struct Point {
  double x = 0;
  double y = 0;
  std::string label;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Point, x, y, label)
};

// A user struct declared for Boost.Hana, which launchpad's wire.hpp converts.
struct Box {
  BOOST_HANA_DEFINE_STRUCT(Box, (double, width), (double, height),
                           (std::vector<int>, tags), (std::optional<std::string>, note));
};

enum class Color : std::uint8_t { red, green, blue = 200 };

}  // namespace fz
