// expect: a map crosses the wire as an object, whose keys are text
// expect: wire_diagnosis<std::map<int, double
// A map crosses the wire as an object, whose keys are text: a std::map with
// int keys is refused wherever it sits.
#include <boost/hana/define_struct.hpp>
#include <launchpad/json.hpp>
#include <map>

struct Histogram {
  BOOST_HANA_DEFINE_STRUCT(Histogram, (std::map<int, double>, counts));
};

int main() {
  lp::json j = Histogram{};
  return j.is_null();
}
